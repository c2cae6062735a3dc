"""`evaluate()`: the library's entry point, wired to the default store."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from oloproof._store import default_store

if TYPE_CHECKING:
    from oloproof_core import DatasetSource, ProgressCallback, Result, Store
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
    isolation: str = "process",
    memory_limit_mb: int | None = None,
) -> Result:
    """Run `system` over `dataset`, judge every case with `evaluators`, and return the Result.

    `system` receives each row's `input` (never its `expected`). A case whose system
    raises is missing, not wrong: check `metric.n_missing` before trusting an
    estimate. With `policy` (a release.yaml path or dict) the run is gated and
    `result.gate` holds the verdict; without one it is None.

    By default the system runs in processes of its own (`isolation="process"`), each
    capped at `memory_limit_mb` (4096 MiB unless given), so it cannot change the
    figures the engine measures and a crash loses only its own cases;
    `isolation="thread"` runs it in this process, for trusted code (docs/isolation.md).
    """
    # Imported here, not at the top: the engine brings the statistics (scipy), and a
    # system's own process imports the system's module, which often imports `evaluate`.
    from oloproof_core import run_evaluation

    return run_evaluation(
        system=system,
        dataset=dataset,
        evaluators=evaluators,
        store=store if store is not None else default_store(),
        policy=policy,
        baseline=baseline,
        split=split,
        concurrency=concurrency,
        timeout=timeout,
        confidence=confidence,
        progress=progress,
        record=record,
        isolation=isolation,
        memory_limit_mb=memory_limit_mb,
    )
