"""One evaluation run: load, execute, judge (cache first), aggregate, decide the gate."""

from __future__ import annotations

import os
import platform
import time
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

from oloproof_core import __version__
from oloproof_core._gc import fewer_collections
from oloproof_core.aggregate import aggregate
from oloproof_core.case import CaseResult
from oloproof_core.dataset import Dataset, load_dataset
from oloproof_core.errors import DeclarationError
from oloproof_core.evaluators import Evaluator
from oloproof_core.execution import DEFAULT_CONCURRENCY, ProgressCallback, run_system
from oloproof_core.judging import check_criteria, judge_cases
from oloproof_core.result import Result
from oloproof_core.stats._validate import check_confidence
from oloproof_core.store import Store
from oloproof_core.system import as_system

DatasetSource = str | os.PathLike[str] | Sequence[Mapping[str, Any]] | Dataset


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
    started_at = datetime.now(UTC)
    started = time.perf_counter()
    release = as_system(system)
    evaluators = list(evaluators)
    if not evaluators:
        raise DeclarationError("evaluators is empty: give at least one, e.g. "
                               "[ExactMatch(criterion='exact_label', field='label')]")
    check_criteria(evaluators)
    check_confidence(confidence)
    if timeout is not None and timeout <= 0:
        raise ValueError(f"timeout must be a positive number of seconds, got {timeout!r}")
    workers = DEFAULT_CONCURRENCY if concurrency is None else int(concurrency)
    gate_policy = _load_policy(policy) if policy is not None else None

    with fewer_collections():
        data = load_dataset(dataset, split=split)
        cases = [CaseResult.from_row(row) for row in data.rows]
        run_system(release, cases, concurrency=workers, timeout=timeout, progress=progress)
        tallies = judge_cases(cases, evaluators, store, concurrency=workers,
                              progress=progress)
        metrics = aggregate(cases, evaluators, confidence)
    provenance = {
        "system": {"name": release.name, "version": release.version,
                   "import_path": release.import_path, "is_async": release.is_async},
        "dataset": {"source": data.source, "digest": data.digest, "n_cases": len(data),
                    "split": data.split},
        "evaluators": [evaluator.describe() for evaluator in evaluators],
        "policy": None if gate_policy is None else gate_policy.describe(),
        "library_version": __version__,
        "python": platform.python_version(),
        "started_at": started_at.isoformat(),
        "finished_at": datetime.now(UTC).isoformat(),
        "duration_s": round(time.perf_counter() - started, 6),
        "concurrency": workers,
        "timeout_s": timeout,
        "confidence": confidence,
        "judging": {name: tally.to_dict() for name, tally in tallies.items()},
    }
    result = Result(metrics=metrics, cases=cases, provenance=provenance)
    if gate_policy is not None:
        result.gate = gate_policy.decide(result, baseline=baseline, store=store)
    if record:
        result.run_id = store.record_run(result)
    return result


def _load_policy(policy: Any) -> Any:
    from oloproof_core.gates import load_policy

    return load_policy(policy)
