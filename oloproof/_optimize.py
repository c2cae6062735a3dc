"""`optimize()`: the library's entry point for optimizations, wired to the default store."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from oloproof._store import default_ledger, default_store_on_use
from oloproof_core import DatasetSource, Store
from oloproof_core.judging.evaluators import Evaluator
from oloproof_core.optimize import (
    Budget,
    Ledger,
    OptimizationResult,
    OptimizationSpec,
    Progress,
    run_optimization,
)


def optimize(
    system: Any,
    dataset: DatasetSource,
    evaluators: Sequence[Evaluator],
    *,
    budget: Budget | Mapping[str, Any],
    engine: str = "auto",
    components: Mapping[str, str] | None = None,
    splits: Mapping[str, float] | None = None,
    objective: str | None = None,
    policy: Any = None,
    concurrency: int | None = None,
    timeout: float | None = None,
    confidence: float = 0.95,
    repeats: int = 1,
    judge_repeats: int = 1,
    seed: int = 0,
    settings: Mapping[str, Any] | None = None,
    store: Store | None = None,
    ledger: Ledger | None = None,
    progress: Progress | None = None,
) -> OptimizationResult:
    """Rewrite `system`'s components (or a DSPy program's instructions) to raise the metric:
    train and val for the search, test for the seed and the winner, which `policy` gates
    (the seed itself when nothing beat it); docs/optimization.md. `repeats`, `judge_repeats`
    (docs/repeats.md): runs per case, and verdicts per model judge and output, everywhere.
    `ConfigError` comes before any record or model call; `MetricContractError` stops it."""
    limits = budget if isinstance(budget, Budget) else Budget.from_mapping(budget)
    spec = OptimizationSpec(
        system=system,
        dataset=dataset,
        evaluators=list(evaluators),
        budget=limits,
        engine=engine,
        components=components,
        splits=splits,
        objective=objective,
        policy=policy,
        concurrency=concurrency,
        timeout=timeout,
        confidence=confidence,
        repeats=repeats,
        judge_repeats=judge_repeats,
        seed=seed,
        settings=dict(settings or {}),
        config=_recorded_config(engine, limits, repeats=repeats, judge_repeats=judge_repeats),
    )
    store = store if store is not None else default_store_on_use()
    ledger = ledger if ledger is not None else default_ledger()
    return run_optimization(spec=spec, store=store, ledger=ledger, progress=progress)


def _recorded_config(engine: str, limits: Budget, **counts: int) -> dict[str, Any]:
    """What the optimization's record keeps of how it was asked for (`counts`: repeats
    and judge repeats, where not 1)."""
    config: dict[str, Any] = {"engine": engine, "budget": limits.to_dict()}
    return config | {name: count for name, count in counts.items() if count != 1}
