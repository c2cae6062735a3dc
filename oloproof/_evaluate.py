"""`evaluate()`: the library's entry point, wired to the default store."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from oloproof._origin import run_origin
from oloproof._store import (
    default_store,
    default_store_on_use,
    is_local_store,
    run_url,
    run_url_hint,
)

if TYPE_CHECKING:
    from oloproof._results import RunRef
    from oloproof_core import DatasetSource, ProgressCallback, Result, Store
    from oloproof_core.judging.evaluators import Evaluator


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
    sandbox: str | None = None,
    until_decided: bool = False,
    batch: int | None = None,
    keep_cases: bool = True,
    evaluator_timeout: float | None = None,
    repeats: int | str = 1,
    judge_repeats: int = 1,
) -> Result:
    """Run `system` over `dataset`, judge every case with `evaluators`, and return the Result.

    `system` gets each row's `input`, never its `expected`; a case it raises on is missing,
    not wrong (check `metric.n_missing`). `policy` gates the run (`result.gate`); `baseline`:
    a Result, a result file or a run id; `sandbox`: auto, required or off (docs/isolation.md);
    `repeats`: runs per case, or "auto"; `judge_repeats`: verdicts per output (repeats.md)"""
    extra = _how_far(until_decided, batch=batch, keep_cases=keep_cases)
    extra.update(repeats=repeats, judge_repeats=judge_repeats)
    extra.update(isolation=isolation, memory_limit_mb=memory_limit_mb, sandbox=sandbox)
    extra.update(timeout=timeout, evaluator_timeout=evaluator_timeout, confidence=confidence)
    chosen = _store_for(store, baseline)
    result = _runner(until_decided)(
        system=system,
        dataset=dataset,
        evaluators=evaluators,
        store=chosen,
        policy=policy,
        baseline=_baseline(baseline, chosen),
        split=split,
        concurrency=concurrency,
        progress=progress,
        record=record,
        origin=run_origin() if record else None,
        **extra,
    )
    return _note_link(result, chosen) if record else result


def _runner(until_decided: bool) -> Any:
    import oloproof_core as engine  # not at the top: a system's process imports evaluate

    # By name: only a run that stops when decided loads its runner, and NumPy with it.
    return engine.run_until_decided if until_decided else engine.run_evaluation


def _how_far(until_decided: bool, *, batch: int | None, keep_cases: bool) -> dict[str, Any]:
    """The options of a run that stops when decided, or of one that runs every case."""
    return {"batch": batch} if until_decided else {"keep_cases": keep_cases}


def _baseline(baseline: RunRef | None, store: Store) -> Result | None:
    from oloproof._results import load

    return None if baseline is None else load(baseline, store=store)


def _store_for(store: Store | None, baseline: RunRef | None) -> Store:
    """The store given, or the default one: read at once for a baseline, and otherwise
    opened while the system's processes start (or when the run first needs it)."""
    if store is not None:
        return store
    chosen = default_store_on_use()
    if baseline is not None and not hasattr(chosen, "load_run"):
        return default_store()
    return chosen


def _note_link(result: Result, store: Store) -> Result:
    """Note the recorded run's dashboard page."""
    link = run_url(result.run_id) if is_local_store(store) else None
    if link is not None:
        result.extras["run_url"] = link
        hint = run_url_hint(result.run_id)
        if hint is not None:
            result.extras["run_url_hint"] = hint
    return result
