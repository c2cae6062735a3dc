"""`evaluate()`: the library's entry point, wired to the default store."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from oloproof._store import default_store
from oloproof_core import (
    DatasetSource,
    ProgressCallback,
    Result,
    Store,
    run_evaluation,
    run_until_decided,
)
from oloproof_core.evaluators import Evaluator


def evaluate(
    system: Any,
    dataset: DatasetSource,
    evaluators: Sequence[Evaluator],
    *,
    policy: Any = None,
    baseline: Result | None = None,
    split: str | None = None,
    concurrency: int | None = None,
    timeout: float | None = None,
    confidence: float = 0.95,
    store: Store | None = None,
    record: bool = True,
    progress: ProgressCallback | None = None,
    until_decided: bool = False,
    batch: int | None = None,
) -> Result:
    """Run `system` over `dataset`, judge every case with `evaluators`, and return the Result.

    `system` receives each row's `input` (never its `expected`). A case whose system
    raises is missing, not wrong: check `metric.n_missing` before trusting an
    estimate. With `policy` (a release.yaml path or dict) the run is gated and
    `result.gate` holds the verdict; without one it is None.

    `until_decided=True` runs the cases in batches (`batch`, default the policy's
    `sequential: {batch: N}` or 50) in an order fixed by their ids, deciding the
    gate with anytime-valid intervals after each batch, and stops as soon as it is
    decided or the cases run out (docs/policy.md, "Sequential gates").
    """
    if until_decided:
        return run_until_decided(
            system=system, dataset=dataset, evaluators=evaluators,
            store=store if store is not None else default_store(), policy=policy,
            baseline=baseline, split=split, concurrency=concurrency, timeout=timeout,
            confidence=confidence, batch=batch, progress=progress, record=record,
        )
    return run_evaluation(
        system=system, dataset=dataset, evaluators=evaluators,
        store=store if store is not None else default_store(), policy=policy,
        baseline=baseline, split=split, concurrency=concurrency, timeout=timeout,
        confidence=confidence, progress=progress, record=record,
    )
