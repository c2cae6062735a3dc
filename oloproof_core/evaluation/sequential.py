"""Runs that add cases in batches until the gate decides (anytime-valid sequential gates).

`run_until_decided` runs a dataset in the order of its cases' id digests (the
order the statistics read them in, fixed by content, so one dataset always gives
the same sequence), a batch at a time, and decides the gate after every batch
with the policy's anytime-valid intervals (`Policy.decide(..., horizon=N)`, N the
number of cases in the dataset). It stops when the gate is decided — every rule
passed, or one failed (a sequential failure is final: the running interval never
widens again) — or when the cases run out. However often it looks, a rule whose
truth sits at its threshold passes at most 2.5 % of the time (bench/README.md).

Entry points for other runners (the workers' "run more cases" on an inconclusive
gate): `sequential_order(rows)` gives the order, `next_batch(rows, done, batch)`
the next cases to run after the ids already done, and `decide_sequential(plan,
cases, ...)` aggregates and decides the cases so far with the right horizon.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import replace
from datetime import UTC, datetime
from typing import Any

from oloproof_core.cases.case import CaseResult
from oloproof_core.datasets.rows import Dataset, Row
from oloproof_core.errors import ConfigError
from oloproof_core.evaluation.conclusion import conclude_run
from oloproof_core.evaluation.plan import DatasetSource, RunPlan, load_for_plan, plan_run
from oloproof_core.evaluation.repeats import AUTO_SEQUENTIAL, case_id_of
from oloproof_core.evaluation.run import open_pool, process_rows, record_result
from oloproof_core.execution.running import ProgressCallback
from oloproof_core.results.result import Result
from oloproof_core.results.store import Store
from oloproof_core.stats._order import key_order

__all__ = ["decide_sequential", "next_batch", "run_until_decided", "sequential_order"]

DEFAULT_BATCH = 50


def sequential_order(rows: Sequence[Row]) -> list[Row]:
    """The dataset's rows in the order of their ids' SHA-256 digests; a repeated case's
    repeats (`evaluation/repeats.py`) together, at the place of its own id's digest."""
    together: dict[str, list[Row]] = {}
    for row in rows:
        together.setdefault(_case_of(row), []).append(row)
    cases = list(together)
    return [row for i in key_order(cases) for row in together[cases[i]]]


def next_batch(rows: Sequence[Row], done: set[str], batch: int) -> list[Row]:
    """The next `batch` cases' rows in sequential order that are not among the ids `done`
    (a repeated case's every repeat)."""
    pending = [row for row in sequential_order(rows) if row.id not in done]
    return _first_cases(pending, batch)


def _case_of(row: Row) -> str:
    """The case a row is a repeat of; the row itself when it is no repeat."""
    return case_id_of(row.id) if row.repeat else row.id


def _first_cases(rows: Sequence[Row], count: int) -> list[Row]:
    """The rows of the first `count` cases of `rows` (each case's rows together)."""
    cases: set[str] = set()
    taken = []
    for row in rows:
        case = _case_of(row)
        if case not in cases:
            if len(cases) == count:
                break
            cases.add(case)
        taken.append(row)
    return taken


def decide_sequential(
    plan: RunPlan,
    cases: Sequence[CaseResult],
    dataset: Dataset,
    store: Store,
    *,
    started_at: datetime,
    duration_s: float,
    baseline: Result | None = None,
    looks: int = 1,
    readouts: bool = True,
) -> Result:
    """Aggregate the cases run so far and decide them with the sequential gate.

    `readouts=False` skips the sample-size readouts (intermediate looks).
    """
    horizon = len({_case_of(row) for row in dataset.rows})
    # Concluded without the policy, which is then applied once, sequentially.
    bare = replace(plan, policy=None)
    result = conclude_run(bare, cases, dataset, store, started_at=started_at, duration_s=duration_s)
    result.provenance["policy"] = None if plan.policy is None else plan.policy.describe()
    result.provenance["sequential"] = {
        "horizon": horizon,
        "looks": looks,
        "n_run": len(cases) // plan.repeats,
        "order": "sha256(case id)",
    }
    if plan.policy is not None:
        result.gate = plan.policy.decide(
            result, baseline=baseline, store=store, horizon=horizon, readouts=readouts
        )
    return result


def _batch_size(plan: RunPlan, batch: int | None) -> int:
    """Cases per batch: `batch`, else the policy's, else 50; a run without a policy, or
    with `repeats: auto`, refused."""
    if plan.auto_repeats:
        raise ConfigError(AUTO_SEQUENTIAL)
    if plan.policy is None:
        raise ConfigError("--until-decided needs a policy: there is no gate to decide")
    size = batch or plan.policy.spec.batch or DEFAULT_BATCH
    if size < 1:
        raise ConfigError(f"batch must be at least 1, got {size}")
    return size


def _batches(
    plan: RunPlan,
    data: Dataset,
    store: Store,
    size: int,
    baseline: Result | None,
    progress: ProgressCallback | None,
    started_at: datetime,
    started: float,
) -> Result:
    """Run batch after batch, deciding after each, until decided or out of cases."""
    # Before the first case: a baseline file or release that is not there stops the run here.
    baseline = plan.policy.baseline_before_run(plan.release.name, store, baseline)
    order = sequential_order(data.rows)
    cases: list[CaseResult] = []
    looks = 0
    while True:
        cases += process_rows(plan, _first_cases(order[len(cases) :], size), store, progress)
        looks += 1
        result = decide_sequential(
            plan, cases, data, store, started_at=started_at,
            duration_s=time.perf_counter() - started, baseline=baseline, looks=looks,
            readouts=False,
        )  # fmt: skip
        if not result.gate.more_cases_may_settle:
            return result
        if len(cases) >= len(order):
            horizon = result.provenance["sequential"]["horizon"]
            result.gate = plan.policy.decide(
                result, baseline=baseline, store=store, horizon=horizon
            )
            return result


def run_until_decided(
    *,
    system: Any,
    dataset: DatasetSource,
    evaluators: Sequence[Any],
    store: Store,
    policy: Any,
    baseline: Result | None = None,
    split: str | None = None,
    concurrency: int | None = None,
    timeout: float | None = None,
    confidence: float = 0.95,
    batch: int | None = None,
    progress: ProgressCallback | None = None,
    record: bool = True,
    isolation: str = "process",
    memory_limit_mb: int | None = None,
    sandbox: str | None = None,
    origin: Mapping[str, Any] | None = None,
    evaluator_timeout: float | None = None,
    repeats: int | str = 1,
    judge_repeats: int = 1,
) -> Result:
    """Add cases in batches until the gate decides or the cases run out (module docstring);
    `batch` (cases, each run `repeats` times) overrides the policy's, else 50."""
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
        repeats=repeats,
        judge_repeats=judge_repeats,
    )
    size, data = _batch_size(plan, batch), load_for_plan(plan, dataset, split)
    assert plan.policy is not None  # `_batch_size` refused a run without one
    if not plan.policy.sequential:
        plan.policy = plan.policy.as_sequential(size)
    # One pool of system processes for every batch, started once.
    with open_pool(plan, cases=len(data.rows)):
        result = _batches(plan, data, store, size, baseline, progress, started_at, started)
    record_result(result, store, record=record, origin=origin)
    return result
