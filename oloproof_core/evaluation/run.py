"""One evaluation run: plan, load, execute and judge (cache first), aggregate, decide the gate."""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from oloproof_core._util.gc_tuning import fewer_collections
from oloproof_core.cases.case import CaseResult
from oloproof_core.datasets.rows import Dataset, Row
from oloproof_core.evaluation.conclusion import conclude_run, run_opening
from oloproof_core.evaluation.plan import DatasetSource, RunPlan, load_for_plan, plan_run
from oloproof_core.evaluation.processes import execute, keep_judging, prepare_while_processes_start
from oloproof_core.evaluation.processes import (
    open_pool as open_pool,  # where callers import it from
)
from oloproof_core.evaluation.recording_as_it_goes import RecordingAsItGoes, process_in_batches
from oloproof_core.execution.running import ProgressCallback
from oloproof_core.judging.evaluators import Evaluator
from oloproof_core.judging.judge import JudgingTally
from oloproof_core.judging.judge_repeats import judge_repeatedly
from oloproof_core.results.result import Result
from oloproof_core.results.store import Store, records_as_it_goes

if TYPE_CHECKING:
    pass


def process_rows(
    plan: RunPlan, rows: Sequence[Row], store: Store, progress: ProgressCallback | None = None
) -> list[CaseResult]:
    """Run the system over `rows` and judge them (cache first); tallies add up in the plan."""
    with fewer_collections(), keep_judging(plan):
        cases = [CaseResult.from_row(row) for row in rows]
        execute(plan, cases, progress)
        tallies, asked = judge_repeatedly(
            cases,
            plan.evaluators,
            store,
            concurrency=plan.concurrency,
            progress=progress,
            settled=plan.settled,
            contained=plan.judging,
            limit=plan.verdict_limit,
        )
    for name, tally in tallies.items():
        plan.tallies.setdefault(name, JudgingTally()).add(tally)
    for name, values in asked.items():
        plan.judge_asked.setdefault(name, {}).update(values)
    return cases


def record_result(
    result: Result,
    store: Store,
    *,
    record: bool,
    recording: RecordingAsItGoes | None = None,
    origin: Mapping[str, Any] | None = None,
) -> None:
    """Note the run's `origin` in its provenance, then record it (with `recording`, its
    conclusion), unless `record` is off."""
    if origin is not None:
        result.provenance["origin"] = dict(origin)
    if recording is not None:
        result.run_id = recording.close(result)
    elif record:
        result.run_id = store.record_run(result)


def _process_every_row(
    plan: RunPlan,
    data: Dataset,
    store: Store,
    progress: ProgressCallback | None,
    keep_cases: bool,
    recording: RecordingAsItGoes | None,
    owned: bool,
) -> list[CaseResult]:
    with open_pool(plan, cases=len(data.rows)):
        prepare_while_processes_start(store)
        if keep_cases:
            return process_rows(plan, data.rows, store, progress)
        return process_in_batches(
            data,
            lambda rows, batch_progress: process_rows(plan, rows, store, batch_progress),
            progress,
            recording,
            owned=owned,
        )


def run_evaluation(
    *,
    system: Any,
    dataset: DatasetSource,
    evaluators: Sequence[Evaluator],
    store: Store,
    policy: Any = None,
    baseline: Result | None = None,
    split: str | None = None,
    concurrency: int | None = None,
    timeout: float | None = None,
    confidence: float = 0.95,
    progress: ProgressCallback | None = None,
    record: bool = True,
    isolation: str = "process",
    memory_limit_mb: int | None = None,
    sandbox: str | None = None,
    keep_cases: bool = True,
    origin: Mapping[str, Any] | None = None,
    evaluator_timeout: float | None = None,
    **repeat_counts: Any,
) -> Result:
    """The whole run from this process: plan, load, process every row, conclude, record;
    `keep_cases=False`: recorded in batches as it goes; `repeats`, `judge_repeats`: see plan."""
    started_at, started = datetime.now(UTC), time.perf_counter()
    plan = plan_run(
        system=system,
        evaluators=evaluators,
        policy=policy,
        concurrency=concurrency,
        timeout=timeout,
        confidence=confidence,
        isolation=isolation,
        memory_limit_mb=memory_limit_mb,
        sandbox=sandbox,
        evaluator_timeout=evaluator_timeout,
        **repeat_counts,
    )
    return _run_planned(
        plan,
        dataset,
        store,
        split=split,
        baseline=baseline,
        progress=progress,
        record=record,
        keep_cases=keep_cases,
        origin=origin,
        started=(started_at, started),
    )


def _run_planned(
    plan: RunPlan,
    dataset: DatasetSource,
    store: Store,
    *,
    split: str | None,
    baseline: Result | None,
    progress: ProgressCallback | None,
    record: bool,
    keep_cases: bool,
    origin: Mapping[str, Any] | None,
    started: tuple[datetime, float],
) -> Result:
    if plan.policy is not None:  # a baseline that is not there stops the run before a case
        baseline = plan.policy.baseline_before_run(plan.release.name, store, baseline)
    with fewer_collections():
        data = load_for_plan(plan, dataset, split, store)
    streams = record and not keep_cases and records_as_it_goes(store)
    recording = RecordingAsItGoes(store, run_opening(plan, data, started[0])) if streams else None
    try:
        # A dataset this call loaded is its own to let go of, batch by batch.
        owned = not isinstance(dataset, Dataset)
        cases = _process_every_row(plan, data, store, progress, keep_cases, recording, owned)
        duration_s = time.perf_counter() - started[1]
        result = conclude_run(
            plan,
            cases,
            data,
            store,
            started_at=started[0],
            duration_s=duration_s,
            baseline=baseline,
        )
        record_result(result, store, record=record, recording=recording, origin=origin)
    except BaseException as exc:
        if recording is not None:
            recording.abandon(exc)
        raise
    return result
