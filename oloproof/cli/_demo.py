"""`oloproof demo`: record an example history and serve the dashboard on it.

On the embedded default (SQLite and the file-system broker in the data folder) it
migrates the database, records three releases of the support bot from
examples/support_bot/ (with failures, missing cases, sub-scores and a release
gate), creates a demo approver and a read-only viewer, then serves the dashboard
with a worker through `oloproof serve`. Running it again records nothing twice.
"""

from __future__ import annotations

import argparse
import os
import sys
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path

from oloproof.cli import _serve
from oloproof.cli._django import django_ready
from oloproof.cli._worker import positive_int
from oloproof_core.errors import ConfigError

EXAMPLE_DIR = Path(__file__).resolve().parents[2] / "examples" / "support_bot"
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
    permissions: tuple[str, ...]
    role: str


APPROVER = DemoUser("demo", "oloproof-demo", ("approve_gate", "add_run"), "may approve gates")
VIEWER = DemoUser("viewer", "oloproof-viewer", (), "read-only")


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = commands.add_parser(
        "demo",
        help="record an example history and serve the dashboard on it",
        description="Migrate the local database, record three releases of the example "
        "support bot (examples/support_bot/) with their release gates, create a demo "
        "approver and a read-only viewer, and serve the dashboard with a worker. "
        "Safe to run again: nothing is recorded twice.",
    )
    parser.add_argument("--host", default="127.0.0.1", help="address to listen on")
    parser.add_argument("--port", type=positive_int, default=8000, help="port (default 8000)")
    parser.add_argument(
        "--no-serve",
        dest="serve",
        action="store_false",
        help="only record the demo and create the users; do not start the dashboard",
    )
    parser.set_defaults(handler=handle)


def handle(args: argparse.Namespace) -> int:
    django_ready(migrate=True)
    recorded = record_demo(log=_log)
    users = [ensure_user(APPROVER), ensure_user(VIEWER)]
    _log(
        f"demo history: {recorded} run(s) recorded now"
        if recorded
        else "demo history: already recorded, nothing added"
    )
    url = f"http://{args.host}:{args.port}/"
    print(f"\n  dashboard   {url}", flush=True)
    for user in users:
        print(f"  login       {user.username} / {user.password}   ({user.role})", flush=True)
    print(flush=True)
    if not args.serve:
        return 0
    serve_args = argparse.Namespace(
        host=args.host, port=args.port, threads=8, worker=True, worker_concurrency=1
    )
    return _serve.handle(serve_args)


def _log(message: str) -> None:
    print(f"oloproof demo: {message}", file=sys.stderr, flush=True)


def record_demo(*, log: object = None) -> int:
    """Record each demo release that has no run on the demo dataset yet; return how many."""
    from django.contrib.auth.models import User
    from django.db import transaction
    from django.utils import timezone

    from oloproof import evaluate
    from oloproof_core.imports import load_object
    from oloproof_core.run_config import load_run_config
    from runs.models import Gate, Release, Run
    from runs.services import approval_create
    from runs.store import DjangoStore

    config_path = EXAMPLE_DIR / DEMO_CONFIG
    if not config_path.is_file():
        raise ConfigError(
            f"{config_path}: the demo's example is missing; run the demo from a clone of the "
            "oloproof repository (it reads examples/support_bot/)"
        )
    config = load_run_config(str(config_path))
    dataset_source = os.path.abspath(config.dataset)
    approver = ensure_user(APPROVER)
    store = DjangoStore(created_by=User.objects.get(username=APPROVER.username))
    recorded = 0
    for index, release in enumerate(RELEASES):  # the first is the approved baseline
        system = load_object(release.system, base_dir=str(EXAMPLE_DIR), what="system")
        version = getattr(system, "version", None) or ""
        existing = Run.objects.filter(
            release__system__name=getattr(system, "name", ""),
            release__version=version,
            dataset__source=dataset_source,
            status=Run.Status.SUCCEEDED,
        )
        run_config = {
            **config.raw,
            "system": release.system,
            "base_dir": str(EXAMPLE_DIR),
        }
        if existing.exists():
            # Older demo folders lack the full config; it lets "New run" start from it.
            existing.exclude(config=run_config).update(config=run_config)
            continue
        if callable(log):
            log(f"recording {getattr(system, 'name', '')}@{version}")
        result = evaluate(
            system,
            dataset_source,
            config.evaluators,
            policy=config.policy,
            concurrency=8,
            store=store,
        )
        run = Run.objects.get(pk=int(str(result.run_id)))
        when = timezone.now() - timedelta(days=release.days_ago)
        with transaction.atomic():
            # Date the run (and its release) back so the history reads as one.
            Run.objects.filter(pk=run.pk).update(
                config=run_config,
                created_at=when,
                started_at=when - timedelta(seconds=run.duration_s or 1),
                finished_at=when,
            )
            Gate.objects.filter(run=run).update(decided_at=when)
            if Run.objects.filter(release=run.release).count() == 1:
                Release.objects.filter(runs=run).update(created_at=when)
        if index == 0 and Gate.objects.filter(run=run, outcome=Gate.Outcome.PASS).exists():
            approval_create(
                run=run,
                user=User.objects.get(username=approver.username),
                decision="approve",
                comment="First release on the demo dataset: the baseline from now on.",
            )
        recorded += 1
    return recorded


def ensure_user(spec: DemoUser) -> DemoUser:
    """The demo user with exactly its permissions and its printed password."""
    from django.contrib.auth.models import Permission, User

    user, _ = User.objects.get_or_create(username=spec.username)
    user.set_password(spec.password)
    user.is_active = True
    user.save()
    user.user_permissions.set(
        Permission.objects.filter(content_type__app_label="runs", codename__in=spec.permissions)
    )
    return spec
