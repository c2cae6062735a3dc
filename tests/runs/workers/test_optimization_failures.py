"""An optimization that cannot go on ends `failed` at once, with the true reason.

`optimize()` recording into the platform's database: a failure is recorded as it
happens (not left "running" or "proving" for the sweep to guess at), a budget refused
before the start leaves no record, and the sweep never hands an optimization that a
process ran itself to a worker, which could not load it: when that process is gone,
the sweep fails it and says so.
"""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pytest
from django.utils import timezone

from oloproof import optimize
from oloproof_core import ConfigError, ContractError
from oloproof_core.optimize import load_optimize_config
from runs.models import Optimization
from runs.store import DjangoStore
from runs.workers import optimization_work
from runs.workers.dispatch import Enqueue
from runs.workers.optimization_ledger import DjangoLedger
from runs.writers.optimization_records import optimization_claim, optimization_create
from runs.writers.projects import project_default_ensure
from tests.support.fake_openai import FakeOpenAI
from tests.support.optimize_task import write_project

pytestmark = pytest.mark.django_db(transaction=True)

WRONG_SHAPE = "def score(input, output, expected=None):\n    return 1.0\n"


def optimize_project(config: Path, *, budget: dict[str, int], ledger: DjangoLedger) -> object:
    spec = load_optimize_config(str(config))
    return optimize(
        spec.system,
        spec.dataset,
        spec.evaluators,
        budget=budget,
        policy=spec.policy,
        store=DjangoStore(),
        ledger=ledger,
    )


def test_a_library_optimization_that_fails_is_recorded_failed_at_once_with_why(
    tmp_path: Path, task_models: FakeOpenAI
) -> None:
    config = write_project(tmp_path / "project")
    (config.parent / "exact.py").write_text(WRONG_SHAPE, encoding="utf-8")
    ledger = DjangoLedger()

    with pytest.raises(ContractError, match="broke the metric contract"):
        optimize_project(config, budget={"metric_calls": 40}, ledger=ledger)

    record = Optimization.objects.get()
    assert record.status == Optimization.Status.FAILED
    assert "broke the metric contract" in record.error
    assert "score() must return a pair" in record.error
    assert record.finished_at is not None
    assert record.outcome["budget_used"]["metric_calls"] == 4  # the seed's val evaluation
    assert not ledger._heartbeats  # this process no longer beats for it


def test_a_budget_refused_before_the_start_leaves_no_record(
    tmp_path: Path, task_models: FakeOpenAI
) -> None:
    with pytest.raises(ConfigError, match="cannot even evaluate the seed on val"):
        optimize_project(
            write_project(tmp_path / "project"), budget={"metric_calls": 2}, ledger=DjangoLedger()
        )

    assert not Optimization.objects.exists()
    assert task_models.request_count == 0


def test_the_sweep_fails_an_optimization_whose_own_process_died_and_resends_submitted_ones(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    sent: list[Enqueue] = []
    monkeypatch.setattr(optimization_work, "send_work", sent.append)
    ledger = DjangoLedger()
    own = int(ledger.optimization_begin(config={"engine": "auto", "budget": {"metric_calls": 9}}))
    ledger._heartbeats.pop(str(own)).stop()  # the process "dies": no more heartbeat
    submitted = optimization_create(
        project=project_default_ensure(),
        config={"system": "calc.py:answer", "base_dir": "/srv/project"},
        status=Optimization.Status.RUNNING,
    )
    long_ago = timezone.now() - timedelta(minutes=10)
    Optimization.objects.update(touched_at=long_ago)

    assert not optimization_claim(
        optimization_id=own, worker="other:1", stale_before=timezone.now()
    )
    optimization_work.optimizations_sweep()

    record = Optimization.objects.get(pk=own)
    assert record.status == Optimization.Status.FAILED
    assert "the process that ran optimization" in record.error
    assert record.claimed_by in record.error
    assert "--submit" in record.error
    assert [work.optimizations for work in sent] == [[submitted.pk]]
    assert Optimization.objects.get(pk=submitted.pk).status == Optimization.Status.RUNNING
