"""The execution service in one process: chunk claims, exactly-once recording and
finalising, the sweep, and giving up on a chunk that keeps killing its workers.

Celery runs tasks eagerly here (in this process, as they are sent), so the same code
paths a worker takes run against the test database; the worker processes and brokers
themselves are exercised in test_execution_api/faults/embedded.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
import yaml
from django.db import transaction
from django.utils import timezone

import oloproof_core as engine
from evalsite.celery import app
from metrics.models import CaseVerdict, MetricEstimate
from runs.models import CaseResult, DatasetCase, Run, RunChunk
from runs.services import run_submit
from runs.store import DjangoStore
from runs.workers import chunks as chunk_work
from runs.workers import dispatch, finalising, planning, run_code, sweep
from tests.support.platform import write_project

N_CASES = 20


@pytest.fixture
def eager_tasks() -> Iterator[None]:
    saved = (app.conf.task_always_eager, app.conf.task_eager_propagates)
    app.conf.task_always_eager = True
    app.conf.task_eager_propagates = True
    yield
    app.conf.task_always_eager, app.conf.task_eager_propagates = saved


@pytest.fixture
def project(tmp_path: Path, settings: Any) -> Path:
    settings.OLOPROOF_CHUNK_SIZE = 7
    return write_project(tmp_path / "project", n_cases=N_CASES)


def submit(config_path: Path, **overrides: Any) -> Run:
    config = {**yaml.safe_load(config_path.read_text()), **overrides}
    with transaction.atomic():
        return run_submit(config=config, base_dir=str(config_path.parent))


@pytest.mark.django_db(transaction=True)
def test_a_run_is_planned_into_chunks_executed_and_finalised_exactly_once(
    project: Path, eager_tasks: None
) -> None:
    run = submit(project)

    run.refresh_from_db()
    assert run.status == Run.Status.SUCCEEDED, run.error
    chunks = list(RunChunk.objects.filter(run=run))
    assert [(c.index, c.first_position, c.size) for c in chunks] == [
        (0, 0, 7),
        (1, 7, 7),
        (2, 14, 6),
    ]
    assert all(chunk.status == RunChunk.Status.DONE for chunk in chunks)
    assert (run.cases_total, run.cases_done) == (N_CASES, N_CASES)
    positions = list(CaseResult.objects.filter(run=run).values_list("position", flat=True))
    assert positions == list(range(N_CASES))
    assert run.provenance["execution"]["chunks"] == 3
    # Tallies add up over the chunks: every case but the broken one (case 5) is judged
    # or found in the verdict cache (ExactMatch reads only output and expected).
    tally = run.provenance["judging"]["exact_label"]
    assert tally["judged"] + tally["cached"] == N_CASES - 1
    assert tally["judged"] >= 1
    estimates = MetricEstimate.objects.filter(run=run).count()

    # Deliveries repeated after the fact change nothing.
    assert planning.run_start(run_id=run.pk) == "skipped"
    assert {chunk_work.chunk_execute(chunk_id=c.pk) for c in chunks} == {"skipped"}
    assert finalising.run_finalise(run_id=run.pk) == "skipped"
    assert CaseResult.objects.filter(run=run).count() == N_CASES
    assert CaseVerdict.objects.filter(run=run).count() == 2 * N_CASES
    assert MetricEstimate.objects.filter(run=run).count() == estimates
    run.refresh_from_db()
    assert run.cases_done == N_CASES


def planned(project: Path) -> tuple[Run, list[RunChunk]]:
    """A run planned into chunks; nothing is sent, as on_commit never fires in `db` tests."""
    run = submit(project)
    assert planning.run_start(run_id=run.pk) == "started"
    return Run.objects.get(pk=run.pk), list(RunChunk.objects.filter(run=run))


@pytest.mark.django_db
def test_a_chunk_held_by_a_live_worker_is_not_taken_and_a_stale_one_is(project: Path) -> None:
    run, chunks = planned(project)
    first = chunks[0]
    now = timezone.now()
    RunChunk.objects.filter(pk=first.pk).update(
        status=RunChunk.Status.CLAIMED, claimed_by="elsewhere:1:live", attempts=1, touched_at=now
    )

    assert chunk_work.chunk_execute(chunk_id=first.pk) == "skipped"
    assert not CaseResult.objects.filter(run=run).exists()

    RunChunk.objects.filter(pk=first.pk).update(touched_at=now - timedelta(minutes=5))
    assert chunk_work.chunk_execute(chunk_id=first.pk) == "done"
    first.refresh_from_db()
    assert (first.status, first.attempts) == (RunChunk.Status.DONE, 2)
    assert CaseResult.objects.filter(run=run).count() == first.size


@pytest.mark.django_db
def test_a_worker_that_lost_its_claim_records_nothing(project: Path) -> None:
    run, chunks = planned(project)
    chunk = chunks[1]
    plan, _ = run_code.run_plan_load(run=run)
    RunChunk.objects.filter(pk=chunk.pk).update(
        status=RunChunk.Status.CLAIMED, claimed_by="new-owner", touched_at=timezone.now()
    )
    cases = engine.process_rows(plan, chunk_work._chunk_rows(chunk), DjangoStore())

    assert chunk_work._chunk_complete(chunk, "old-owner", plan, cases) is False
    assert not CaseResult.objects.filter(run=run).exists()
    assert chunk_work._chunk_complete(chunk, "new-owner", plan, cases) is True
    assert chunk_work._chunk_complete(chunk, "new-owner", plan, cases) is False
    assert CaseResult.objects.filter(run=run).count() == chunk.size
    run.refresh_from_db()
    assert run.cases_done == chunk.size


@pytest.mark.django_db
def test_the_sweep_hands_a_dead_workers_chunk_to_the_workers_again(
    project: Path, eager_tasks: None
) -> None:
    run, chunks = planned(project)
    long_ago = timezone.now() - timedelta(minutes=10)
    RunChunk.objects.filter(pk=chunks[0].pk).update(
        status=RunChunk.Status.CLAIMED, claimed_by="dead:1:x", attempts=1, touched_at=long_ago
    )
    RunChunk.objects.filter(pk__in=[c.pk for c in chunks[1:]]).update(touched_at=long_ago)

    report = sweep.runs_sweep()

    assert (report.reclaimed, report.resent) == (1, 2)
    assert set(RunChunk.objects.filter(run=run).values_list("status", flat=True)) == {"done"}
    assert CaseResult.objects.filter(run=run).count() == N_CASES
    # All chunks are done now, and their finalising task went nowhere (on_commit does
    # not fire here): a sweep a stale interval later sends the run to be finalised.
    assert sweep.runs_sweep().finalising == 0
    later = timezone.now() + dispatch.stale_after() + timedelta(seconds=1)
    assert sweep.runs_sweep(now=later).finalising == 1
    run.refresh_from_db()
    assert run.status == Run.Status.SUCCEEDED


@pytest.mark.django_db
def test_a_chunk_that_keeps_killing_its_workers_fails_the_run_with_the_reason(
    project: Path,
) -> None:
    run, chunks = planned(project)
    RunChunk.objects.filter(pk=chunks[2].pk).update(attempts=chunk_work.MAX_CHUNK_ATTEMPTS)

    assert chunk_work.chunk_execute(chunk_id=chunks[2].pk) == "failed"
    run.refresh_from_db()
    assert run.status == Run.Status.FAILED
    assert "chunk 2 of run" in run.error
    assert "cases 14 to 19" in run.error
    assert "never finished" in run.error


@pytest.mark.django_db
def test_code_that_no_longer_imports_fails_the_run_naming_it(project: Path) -> None:
    run = submit(project)
    # Edited between queueing (where it was checked) and the worker taking the run.
    (project.parent / "checks.py").write_text("# short_label was removed\n", encoding="utf-8")

    assert planning.run_start(run_id=run.pk) == "failed"
    run.refresh_from_db()
    assert run.status == Run.Status.FAILED
    assert "short_label" in run.error
    assert "could not load the code" in run.error
    assert not RunChunk.objects.filter(run=run).exists()


@pytest.mark.django_db
def test_a_platform_fault_in_a_chunk_fails_the_run_with_its_traceback(project: Path) -> None:
    run, chunks = planned(project)
    DatasetCase.objects.filter(dataset_id=run.dataset_id, position=3).update(input=["not", "a"])

    assert chunk_work.chunk_execute(chunk_id=chunks[0].pk) == "failed"
    run.refresh_from_db()
    assert run.status == Run.Status.FAILED
    assert run.error.startswith(f"chunk 0 of run {run.pk} failed on worker ")
    assert "DatasetError" in run.error
    assert "'input' of row 'case_00003' must be an object" in run.error
    chunks[0].refresh_from_db()
    assert chunks[0].status == RunChunk.Status.PENDING
    assert not CaseResult.objects.filter(run=run).exists()
