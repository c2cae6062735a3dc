"""The example history: three releases of the support bot, their gates, two accounts.

Recorded from examples/support_bot/ (with failures, missing cases, sub-scores and
a release gate); the first release is approved, so it is the baseline from then
on. Recording again adds nothing: a release already recorded on the demo dataset
is skipped.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path

from django.contrib.auth.models import User as Account
from django.utils import timezone

import oloproof_core as engine
from runs.access import LOCAL
from runs.models import Gate, Run
from runs.selectors.runs import runs_of_release_on_dataset
from runs.services import approval_create
from runs.store import DjangoStore
from runs.writers.accounts import account_ensure
from runs.writers.projects import code_root_register, membership_set, project_default_ensure
from runs.writers.recording import run_config_replace, run_redate

EXAMPLE_DIR = Path(__file__).resolve().parents[3] / "examples" / "support_bot"
DEMO_CONFIG = "demo.yaml"


@dataclass(frozen=True, slots=True)
class DemoRelease:
    system: str
    """The release's system in examples/support_bot/releases.py."""
    days_ago: float
    """How long ago the run is dated, so the history reads like one."""


RELEASES = (
    DemoRelease("releases.py:answer_v1", days_ago=14),
    DemoRelease("releases.py:answer_v1_1", days_ago=6),
    DemoRelease("releases.py:answer_v2", days_ago=0.05),
)


@dataclass(frozen=True, slots=True)
class DemoUser:
    username: str
    password: str
    project_role: str
    """The account's role in the default project."""
    role: str
    """What the role means, as the demo command prints it."""


APPROVER = DemoUser("demo", "oloproof-demo", "approver", "may run and approve gates")
VIEWER = DemoUser("viewer", "oloproof-viewer", "viewer", "read-only")
DEMO_USERS = (APPROVER, VIEWER)


def demo_users_ensure() -> Account:
    """The demo accounts, members of the default project; returns the approver."""
    project = project_default_ensure()
    code_root_register(by=LOCAL, project=project, path=str(EXAMPLE_DIR))
    accounts = {}
    for spec in DEMO_USERS:
        account = account_ensure(username=spec.username, password=spec.password)
        membership_set(by=LOCAL, project=project, user=account, role=spec.project_role)
        accounts[spec.username] = account
    return accounts[APPROVER.username]


def demo_record(*, log: Callable[[str], None] | None = None) -> int:
    """Record each demo release that has no run on the demo dataset yet; return how many."""
    config_path = EXAMPLE_DIR / DEMO_CONFIG
    if not config_path.is_file():
        raise engine.ConfigError(
            f"{config_path}: the demo's example is missing; run the demo from a clone of the "
            "oloproof repository (it reads examples/support_bot/)"
        )
    config = engine.load_run_config(str(config_path))
    dataset_source = os.path.abspath(config.dataset)
    approver = demo_users_ensure()
    # Recorded by the demo itself, not by the approver: four eyes let them approve it.
    store = DjangoStore()
    recorded = 0
    for index, release in enumerate(RELEASES):  # the first is the approved baseline
        system = engine.load_object(release.system, base_dir=str(EXAMPLE_DIR), what="system")
        run_config = {**config.raw, "system": release.system, "base_dir": str(EXAMPLE_DIR)}
        existing = runs_of_release_on_dataset(
            user=LOCAL,
            system_name=getattr(system, "name", ""),
            version=getattr(system, "version", None) or "",
            dataset_source=dataset_source,
        )
        if existing:
            # Older demo folders lack the full config; it lets "New run" start from it.
            run_config_replace(run_ids=existing, config=run_config)
            continue
        if log is not None:
            log(f"recording {getattr(system, 'name', '')}@{getattr(system, 'version', '')}")
        result = engine.run_evaluation(
            system=system,
            dataset=dataset_source,
            evaluators=config.evaluators,
            store=store,
            policy=config.policy,
            concurrency=8,
        )
        run = Run.objects.select_related("release").get(pk=int(str(result.run_id)))
        run_redate(
            run=run, when=timezone.now() - timedelta(days=release.days_ago), config=run_config
        )
        if index == 0 and Gate.objects.filter(run=run, outcome=Gate.Outcome.PASS).exists():
            approval_create(
                run=run,
                user=approver,
                decision="approve",
                comment="First release on the demo dataset: the baseline from now on.",
            )
        recorded += 1
    return recorded
