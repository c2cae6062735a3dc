"""`evaluate()`: the library's entry point, wired to the default store."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from oloproof._origin import run_origin
from oloproof._store import default_store, is_local_store, run_url

if TYPE_CHECKING:
    from oloproof._results import RunRef
    from oloproof_core import DatasetSource, ProgressCallback, Result, Store
    from oloproof_core.evaluators import Evaluator


def evaluate(
    system: Any,
    dataset: DatasetSource,
    evaluators: Sequence[Evaluator],
    *,
    policy: Any = None,
    baseline: RunRef | None = None,
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
    `result.gate` holds the verdict; without one it is None. `baseline` is a Result,
    a result file or a recorded run's id. The system runs in processes of its own
    (`isolation="process"`, each capped at `memory_limit_mb`, 4096 MiB by default) or,
    for trusted code, in this one (`isolation="thread"`); see docs/isolation.md.
    """
    # Imported here: the engine brings the statistics, and a system's own process
    # imports the system's module, which often imports `evaluate`.
    from oloproof._results import load
    from oloproof_core import run_evaluation

    chosen = store if store is not None else default_store()
    result = run_evaluation(
        system=system,
        dataset=dataset,
        evaluators=evaluators,
        store=chosen,
        policy=policy,
        baseline=None if baseline is None else load(baseline, store=chosen),
        split=split,
        concurrency=concurrency,
        timeout=timeout,
        confidence=confidence,
        progress=progress,
        record=False,
        isolation=isolation,
        memory_limit_mb=memory_limit_mb,
    )
    return _record(result, chosen) if record else result


def _record(result: Result, store: Store) -> Result:
    """Record the finished run, marked with its origin, and note its dashboard page."""
    origin = run_origin()
    if origin is not None:
        result.provenance["origin"] = origin
    result.run_id = store.record_run(result)
    link = run_url(result.run_id) if is_local_store(store) else None
    if link is not None:
        result.extras["run_url"] = link
    return result
