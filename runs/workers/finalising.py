"""Finalising a run whose chunks are all done: aggregate, decide the gate, succeed once.

The conclusion reads the run's value columns (`runs.selectors.case_columns`), not its
cases whole, so its memory follows the ids and values of the cases, not their content.

The success is a conditional update from running in the transaction that writes
the metrics and the gate, so a finalising task delivered twice finalises once. A
sequential run being continued whose gate is still inconclusive gets its next batch
instead (`runs.workers.sequential_runs`), by another conditional update.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from django.db import transaction
from django.utils import timezone

import oloproof_core as engine
from runs.models import Run, RunChunk
from runs.selectors.case_columns import run_case_columns
from runs.selectors.earlier_tries import earlier_runs_read
from runs.store import DjangoStore
from runs.workers.chunks import all_chunks_done, chunks_create
from runs.workers.dispatch import Enqueue, chunk_size, send_work_on_commit
from runs.workers.run_code import RunCodeError, load_failure, run_plan_load
from runs.workers.sequential_runs import (
    sequential_decide,
    sequential_next,
    sequential_repeats,
    sequential_state,
)
from runs.writers.recording import run_conclusion_record, run_fail, run_sequential_moved


def run_finalise(*, run_id: int) -> str:
    """Aggregate every recorded case, decide the gate and mark the run succeeded, once."""
    run = (
        Run.objects.select_related("dataset", "release__system", "project")
        .filter(pk=run_id)
        .first()
    )
    if run is None or run.status != Run.Status.RUNNING or not all_chunks_done(run_id):
        return "skipped"
    try:
        plan, config = run_plan_load(run=run)
        baseline = engine.load_result(config.baseline) if config.baseline else None
    except Exception as exc:
        reason = str(exc) if isinstance(exc, RunCodeError) else load_failure(run, exc, "")
        run_fail(run_id=run_id, reason=reason)
        return "failed"
    chunks = _ChunksRead.of(run_id, plan)
    record = run.dataset
    assert record is not None, "a running run has its dataset recorded"
    dataset = engine.Dataset(
        source=record.source,
        rows=[],
        digest=record.digest,
        split=run.split,
        unrepeated_digest=record.unrepeated_digest,
    )
    started_at = run.started_at or run.created_at
    finished_at = timezone.now()
    timing: dict[str, Any] = {
        "started_at": started_at,
        "duration_s": (finished_at - started_at).total_seconds(),
    }
    cases = _case_columns(run, plan)
    # Before the conclusion: the gate says so when a chunk's system was not protected.
    plan.execution = _execution_provenance(chunks, plan)
    state = sequential_state(run)
    if state is None:
        result = engine.conclude_run(
            plan, cases, dataset, DjangoStore(project=run.project.slug), **timing, baseline=baseline
        )
    else:
        result = sequential_decide(
            run=run, plan=plan, cases=cases, dataset=dataset, state=state, timing=timing,
            baseline=baseline,
        )  # fmt: skip
        if _next_batch_queued(run, result, state):
            return "extended"
    succeeded = run_conclusion_record(run=run, result=result, finished_at=finished_at)
    return "succeeded" if succeeded else "skipped"


def _case_columns(run: Run, plan: engine.RunPlan) -> engine.CaseColumns:
    """The run's columns; the score metrics' also in reading order, for their intervals.
    With `repeats: auto`, each case's tries (as the allocation queued with the run gave
    them) are noted on `plan`, which the figures weigh by."""
    evaluators = plan.evaluators
    columns = run_case_columns(
        run=run,
        criteria=[e.criterion for e in evaluators],
        scored={e.criterion for e in evaluators if e.value_type != "pass_fail"},
    )
    if plan.auto_repeats:
        plan.tries, plan.evidence_runs = engine.tries_of(columns.ids), earlier_runs_read(run=run)
    return columns


def _next_batch_queued(run: Run, result: engine.Result, state: dict[str, Any]) -> bool:
    """Hand the next batch of a continued sequential run to the workers, once per look."""
    step = sequential_next(result=result, state=state)
    if step is None:
        return False
    done, total = step
    looks = result.provenance["sequential"]["looks"]
    with transaction.atomic():
        if run_sequential_moved(
            run_id=run.pk,
            cases_before=run.cases_total,
            cases_total=total,
            sequential={**state, "looks": looks, "n_run": done // sequential_repeats(state)},
        ):
            chunk_ids = chunks_create(run_id=run.pk, total=total, size=chunk_size(), start=done)
            send_work_on_commit(Enqueue(chunks=chunk_ids))
    return True


@dataclass
class _ChunksRead:
    """What the conclusion needs of the run's chunks, read one at a time: a million-case
    run has 2,000 of them, and holding their rows grew finalising with the run."""

    count: int = 0
    attempts: int = 0
    workers: set[str] = field(default_factory=set)
    first_execution: dict[str, Any] | None = None
    first_unprotected: dict[str, Any] | None = None

    @classmethod
    def of(cls, run_id: int, plan: engine.RunPlan) -> _ChunksRead:
        """The chunks' summary; their judging tallies and judge repeats' values are added
        to `plan`'s."""
        found = cls()
        fields = ("judging", "execution", "claimed_by", "attempts", "judge_asked")
        for chunk in RunChunk.objects.filter(run_id=run_id).only(*fields).iterator(500):
            found.count += 1
            found.attempts += chunk.attempts
            found.workers.add(chunk.claimed_by.rsplit(":", 1)[0])
            execution = chunk.execution or None
            if found.first_execution is None:
                found.first_execution = execution
            unprotected = execution and execution.get("measurements") != "protected"
            if unprotected and found.first_unprotected is None:
                found.first_unprotected = execution
            for name, counts in chunk.judging.items():
                tally = plan.tallies.setdefault(name, engine.JudgingTally())
                tally.add(engine.JudgingTally(**counts))
            for name, values in chunk.judge_asked.items():
                plan.judge_asked.setdefault(name, {}).update(values)
        return found


def _execution_provenance(chunks: _ChunksRead, plan: engine.RunPlan) -> dict[str, Any]:
    """The run's execution over every chunk: protected only if every chunk's system ran in
    a sandbox; the sandbox named is an unprotected chunk's, else the first chunk's."""
    executed = chunks.first_execution is not None
    protected = plan.isolation == "process" and executed and chunks.first_unprotected is None
    shown = chunks.first_unprotected or chunks.first_execution or {}
    return {
        "mode": "workers",
        "isolation": plan.isolation,
        "measurements": "protected" if protected else "not protected",
        "answers": "protected" if protected else "not protected",
        "sandbox": shown.get("sandbox") or {"on": False, "reason": "no chunk said how it ran"},
        "chunks": chunks.count,
        "chunk_attempts": chunks.attempts,
        "workers": sorted(chunks.workers),
    }
