"""One evaluation run: plan, load, execute and judge (cache first), aggregate, decide the gate."""

from __future__ import annotations

import os
import platform
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from oloproof_core._gc import fewer_collections
from oloproof_core._version import __version__
from oloproof_core.aggregate import aggregate
from oloproof_core.case import CaseResult
from oloproof_core.dataset import Dataset, Row, load_dataset
from oloproof_core.errors import DeclarationError
from oloproof_core.evaluators import Evaluator
from oloproof_core.execution import DEFAULT_CONCURRENCY, ProgressCallback, run_system
from oloproof_core.judging import JudgingTally, check_criteria, judge_cases
from oloproof_core.result import Result
from oloproof_core.stats._validate import check_confidence
from oloproof_core.store import Store
from oloproof_core.system import System, as_system

DatasetSource = str | os.PathLike[str] | Sequence[Mapping[str, Any]] | Dataset


@dataclass(slots=True)
class RunPlan:
    """A validated run: what to execute and how to judge and decide it.

    The in-process path and the distributed path (chunks on Celery workers, then a
    finalising step) share it, so both judge, aggregate and gate the same way.
    """

    release: System
    evaluators: list[Evaluator]
    concurrency: int
    timeout: float | None
    confidence: float
    policy: Any = None
    tallies: dict[str, JudgingTally] = field(default_factory=dict)


def plan_run(*, system: Any, evaluators: Sequence[Evaluator], policy: Any = None,
             concurrency: int | None = None, timeout: float | None = None,
             confidence: float = 0.95) -> RunPlan:
    evaluators = list(evaluators)
    if not evaluators:
        raise DeclarationError("evaluators is empty: give at least one, e.g. "
                               "[ExactMatch(criterion='exact_label', field='label')]")
    check_criteria(evaluators)
    check_confidence(confidence)
    if timeout is not None and timeout <= 0:
        raise ValueError(f"timeout must be a positive number of seconds, got {timeout!r}")
    loaded = _load_policy(policy) if policy is not None else None
    if loaded is not None:
        # Rules that could never pass are refused before a single case runs.
        loaded.check_declared({e.criterion: tuple(e.score_range) for e in evaluators})
    return RunPlan(release=as_system(system), evaluators=evaluators,
                   concurrency=DEFAULT_CONCURRENCY if concurrency is None else int(concurrency),
                   timeout=timeout, confidence=confidence, policy=loaded)


def process_rows(plan: RunPlan, rows: Sequence[Row], store: Store,
                 progress: ProgressCallback | None = None) -> list[CaseResult]:
    """Run the system over `rows` and judge them (cache first); tallies add up in the plan."""
    with fewer_collections():
        cases = [CaseResult.from_row(row) for row in rows]
        run_system(plan.release, cases, concurrency=plan.concurrency, timeout=plan.timeout,
                   progress=progress)
        tallies = judge_cases(cases, plan.evaluators, store, concurrency=plan.concurrency,
                              progress=progress)
    for name, tally in tallies.items():
        plan.tallies.setdefault(name, JudgingTally()).add(tally)
    return cases


def conclude_run(plan: RunPlan, cases: list[CaseResult], dataset: Dataset, store: Store, *,
                 started_at: datetime, duration_s: float,
                 baseline: Result | None = None) -> Result:
    """Aggregate the judged cases into metrics, record provenance and decide the gate."""
    metrics = aggregate(cases, plan.evaluators, plan.confidence)
    release = plan.release
    provenance = {
        "system": {"name": release.name, "version": release.version,
                   "import_path": release.import_path, "is_async": release.is_async},
        "dataset": {"source": dataset.source, "digest": dataset.digest,
                    "n_cases": len(cases), "split": dataset.split},
        "evaluators": [evaluator.describe() for evaluator in plan.evaluators],
        "policy": None if plan.policy is None else plan.policy.describe(),
        "library_version": __version__,
        "python": platform.python_version(),
        "started_at": started_at.isoformat(),
        "finished_at": datetime.now(UTC).isoformat(),
        "duration_s": round(duration_s, 6),
        "concurrency": plan.concurrency,
        "timeout_s": plan.timeout,
        "confidence": plan.confidence,
        "judging": {name: tally.to_dict() for name, tally in plan.tallies.items()},
    }
    result = Result(metrics=metrics, cases=cases, provenance=provenance)
    if plan.policy is not None:
        result.gate = plan.policy.decide(result, baseline=baseline, store=store)
    return result


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
) -> Result:
    """The whole run in this process: plan, load, process every row, conclude, record."""
    started_at = datetime.now(UTC)
    started = time.perf_counter()
    plan = plan_run(system=system, evaluators=evaluators, policy=policy,
                    concurrency=concurrency, timeout=timeout, confidence=confidence)
    with fewer_collections():
        data = load_dataset(dataset, split=split)
    cases = process_rows(plan, data.rows, store, progress)
    result = conclude_run(plan, cases, data, store, started_at=started_at,
                          duration_s=time.perf_counter() - started, baseline=baseline)
    if record:
        result.run_id = store.record_run(result)
    return result


def _load_policy(policy: Any) -> Any:
    from oloproof_core.gates import load_policy

    return load_policy(policy)
