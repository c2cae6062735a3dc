"""One evaluation run: plan, load, execute and judge (cache first), aggregate, decide the gate."""

from __future__ import annotations

import math
import os
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from oloproof_core._util.gc_tuning import fewer_collections
from oloproof_core.cases.case import CaseResult
from oloproof_core.datasets.dataset import Dataset, Row, load_dataset
from oloproof_core.errors import ConfigError, DeclarationError
from oloproof_core.evaluation.conclusion import conclude_run, run_opening
from oloproof_core.evaluation.recording_as_it_goes import RecordingAsItGoes, process_in_batches
from oloproof_core.execution.isolation import DEFAULT_MEMORY_LIMIT_MB, ISOLATION_MODES, sandbox_mode
from oloproof_core.execution.processes import execute, keep_judging, prepare_while_processes_start
from oloproof_core.execution.processes import open_pool as open_pool  # where callers import it from
from oloproof_core.execution.running import DEFAULT_CONCURRENCY, ProgressCallback
from oloproof_core.execution.systems import System, as_system
from oloproof_core.judging.evaluators import Evaluator
from oloproof_core.judging.judge import (
    JudgingTally,
    SettledVerdicts,
    VerdictLimit,
    check_criteria,
    judge_cases,
)
from oloproof_core.results.result import Result
from oloproof_core.results.store import Store, records_as_it_goes
from oloproof_core.stats._validate import check_confidence

if TYPE_CHECKING:
    from oloproof_core.execution.isolation import MeteredPool
    from oloproof_core.execution.isolation._lease import PoolLease
    from oloproof_core.judging.contained import ContainedJudging

DatasetSource = str | os.PathLike[str] | Sequence[Mapping[str, Any]] | Dataset


@dataclass(slots=True)
class RunPlan:
    """A validated run: what to execute and how to judge and decide it.

    The in-process path and the distributed path (chunks on Celery workers, then a
    finalising step) share it, so both run, judge, aggregate and gate the same way.
    `requested_concurrency` is what the caller asked for (None: the defaults, which
    differ between threads and processes). `pool` is the run's own (`open_pool`), or
    a lease on processes it shares with other releases of its system (`PoolLease`:
    an optimization's candidates). `judging`: the processes its evaluators judge in
    (`keep_judging`); `evaluator_timeout`: their limit per verdict, if not `timeout`.
    """

    release: System
    evaluators: list[Evaluator]
    concurrency: int
    timeout: float | None
    confidence: float
    policy: Any = None
    isolation: str = "process"
    memory_limit_mb: int = DEFAULT_MEMORY_LIMIT_MB
    requested_concurrency: int | None = None
    sandbox: str = "auto"
    hidden_paths: tuple[str, ...] = ()
    """What the sandbox hides from the system beside the store: the dataset's file."""
    tallies: dict[str, JudgingTally] = field(default_factory=dict)
    settled: SettledVerdicts = field(default_factory=SettledVerdicts)
    execution: dict[str, Any] = field(default_factory=dict)
    pool: MeteredPool | PoolLease | None = None
    evaluator_timeout: float | None = None
    judging: ContainedJudging | None = None
    judging_execution: dict[str, Any] = field(default_factory=dict)

    @property
    def verdict_limit(self) -> VerdictLimit:
        """Each verdict's time limit: `evaluator_timeout`, else the run's `timeout`."""
        if self.evaluator_timeout is not None:
            return VerdictLimit(self.evaluator_timeout, "evaluator_timeout")
        return VerdictLimit(
            self.timeout, "the run's timeout; evaluator_timeout gives evaluators their own"
        )


def plan_run(
    *,
    system: Any,
    evaluators: Sequence[Evaluator],
    policy: Any = None,
    concurrency: int | None = None,
    timeout: float | None = None,
    confidence: float = 0.95,
    isolation: str = "process",
    memory_limit_mb: int | None = None,
    sandbox: str | None = None,
    evaluator_timeout: float | None = None,
) -> RunPlan:
    evaluators = list(evaluators)
    if not evaluators:
        raise DeclarationError(
            "evaluators is empty: give at least one, e.g. "
            "[ExactMatch(criterion='exact_label', field='label')]"
        )
    check_criteria(evaluators)
    check_confidence(confidence)
    # `not timeout > 0` also refuses NaN, which would otherwise switch the timeout off.
    for name, seconds in (("timeout", timeout), ("evaluator_timeout", evaluator_timeout)):
        if seconds is not None and not (seconds > 0 and math.isfinite(seconds)):
            raise ConfigError(f"{name} must be a positive number of seconds, got {seconds!r}")
    _check_isolation(isolation, memory_limit_mb)
    sandbox = sandbox_mode(sandbox, isolation)
    release = _release_for(system, isolation)
    loaded = _load_policy(policy) if policy is not None else None
    if loaded is not None:
        # Rules that could never pass are refused before a single case runs.
        loaded.check_declared({e.criterion: tuple(e.score_range) for e in evaluators})
    return RunPlan(
        release=release,
        evaluators=evaluators,
        concurrency=DEFAULT_CONCURRENCY if concurrency is None else int(concurrency),
        timeout=timeout,
        confidence=confidence,
        policy=loaded,
        isolation=isolation,
        memory_limit_mb=memory_limit_mb or DEFAULT_MEMORY_LIMIT_MB,
        requested_concurrency=None if concurrency is None else int(concurrency),
        sandbox=sandbox,
        evaluator_timeout=evaluator_timeout,
    )


def load_for_plan(plan: RunPlan, dataset: DatasetSource, split: str | None) -> Dataset:
    """Load the run's dataset; a file's answers are no business of the system, so the
    sandbox hides it."""
    data = load_dataset(dataset, split=split)
    if isinstance(dataset, (str, os.PathLike)):
        plan.hidden_paths = (*plan.hidden_paths, os.fspath(dataset))
    return data


def _release_for(system: Any, isolation: str) -> System:
    release = as_system(system)
    if isolation == "thread" and release.declared_travel() is not None:
        raise ConfigError(
            f"isolation='thread' runs the system in this process, but {release!r} was read "
            "from its run config in a sandbox and runs only in processes of its own: put "
            "`isolation: thread` in the config (it is then imported here), or leave "
            "isolation at 'process'"
        )
    return release


def _check_isolation(isolation: str, memory_limit_mb: int | None) -> None:
    if isolation not in ISOLATION_MODES:
        raise ValueError(
            f"isolation must be 'process' (the default: the system runs in "
            f"processes of its own) or 'thread' (in this process, for trusted "
            f"code), got {isolation!r}"
        )
    if memory_limit_mb is not None and (
        isinstance(memory_limit_mb, bool)
        or not isinstance(memory_limit_mb, int)
        or memory_limit_mb <= 0
    ):
        raise ValueError(
            f"memory_limit_mb must be a positive whole number of MiB, got {memory_limit_mb!r}"
        )


def process_rows(
    plan: RunPlan, rows: Sequence[Row], store: Store, progress: ProgressCallback | None = None
) -> list[CaseResult]:
    """Run the system over `rows` and judge them (cache first); tallies add up in the plan."""
    with fewer_collections(), keep_judging(plan):
        cases = [CaseResult.from_row(row) for row in rows]
        execute(plan, cases, progress)
        tallies = judge_cases(
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
) -> Result:
    """The whole run from this process: plan, load, process every row, conclude, record.
    `keep_cases=False`: the cases are run in batches and slimmed (`recording_as_it_goes`),
    recorded batch by batch in a store that can. `origin` goes into the provenance."""
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
        data = load_for_plan(plan, dataset, split)
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


def _load_policy(policy: Any) -> Any:
    from oloproof_core.gates import load_policy

    return load_policy(policy)
