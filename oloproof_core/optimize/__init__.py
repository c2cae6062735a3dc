"""Optimization: engines that raise a metric by rewriting a system's texts, proven on test.

    from oloproof_core.optimize import Budget, OptimizationSpec, run_optimization

    spec = OptimizationSpec(system=bot, dataset="cases.jsonl", evaluators=[metric],
                            budget=Budget(metric_calls=200, usd=1.0))
    result = run_optimization(spec=spec, store=store, ledger=InMemoryLedger())

A candidate is a set of component texts (a system's `component()` texts, or a DSPy
program's predictor instructions), evaluated by the engine's own run machinery.
The engines (`gepa`, `dspy-gepa`, `auto`) search on train and val within the
budget; the seed and the winner are then run once on test, compared and gated (the
seed alone when nothing beat it). Everything is checked before anything runs; a
metric that breaks its contract stops the search (`MetricContractError`).
The platform records through the `Ledger` protocol; see docs/optimization.md.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from oloproof_core._util.names_on_first_use import names_on_first_use

if TYPE_CHECKING:
    from oloproof_core.optimize._artifact import Artifact, artifact_from, is_dspy_program
    from oloproof_core.optimize._auto import auto_choice
    from oloproof_core.optimize._budget import LIMITS, Budget, BudgetExhausted, BudgetUsed, Meter
    from oloproof_core.optimize._candidates import (
        SealedSplitError,
        candidate_digest,
        release_version,
    )
    from oloproof_core.optimize._config import (
        ENGINE_CHOICES,
        OPTIMIZE_CONFIG_FIELDS,
        check_optimize_config,
        load_optimize_config,
        optimize_spec_from_mapping,
    )
    from oloproof_core.optimize._contract import MetricContractError
    from oloproof_core.optimize._ledger import (
        CandidateRecord,
        EvaluationRecord,
        InMemoryLedger,
        Ledger,
        ReflectionRecord,
    )
    from oloproof_core.optimize._outcome import OptimizationResult
    from oloproof_core.optimize._packages import EngineUnavailableError
    from oloproof_core.optimize._reflection import new_text_from, reflection_prompt
    from oloproof_core.optimize._registry import ENGINES, Engine, engine_named, register_engine
    from oloproof_core.optimize._run import run_optimization, split_dataset
    from oloproof_core.optimize._spec import OptimizationSpec, Progress
    from oloproof_core.optimize._splits import DEFAULT_FRACTIONS, SPLITS, Splits, split_rows

_EXPORTS = {
    "Artifact": "._artifact",
    "Budget": "._budget",
    "BudgetExhausted": "._budget",
    "BudgetUsed": "._budget",
    "CandidateRecord": "._ledger",
    "DEFAULT_FRACTIONS": "._splits",
    "ENGINES": "._registry",
    "ENGINE_CHOICES": "._config",
    "Engine": "._registry",
    "EngineUnavailableError": "._packages",
    "EvaluationRecord": "._ledger",
    "InMemoryLedger": "._ledger",
    "LIMITS": "._budget",
    "Ledger": "._ledger",
    "Meter": "._budget",
    "MetricContractError": "._contract",
    "OPTIMIZE_CONFIG_FIELDS": "._config",
    "OptimizationResult": "._outcome",
    "OptimizationSpec": "._spec",
    "Progress": "._spec",
    "ReflectionRecord": "._ledger",
    "SPLITS": "._splits",
    "SealedSplitError": "._candidates",
    "Splits": "._splits",
    "artifact_from": "._artifact",
    "auto_choice": "._auto",
    "candidate_digest": "._candidates",
    "check_optimize_config": "._config",
    "engine_named": "._registry",
    "is_dspy_program": "._artifact",
    "load_optimize_config": "._config",
    "new_text_from": "._reflection",
    "optimize_spec_from_mapping": "._config",
    "reflection_prompt": "._reflection",
    "register_engine": "._registry",
    "release_version": "._candidates",
    "run_optimization": "._run",
    "split_dataset": "._run",
    "split_rows": "._splits",
}

__all__ = [
    "DEFAULT_FRACTIONS",
    "ENGINES",
    "ENGINE_CHOICES",
    "LIMITS",
    "OPTIMIZE_CONFIG_FIELDS",
    "SPLITS",
    "Artifact",
    "Budget",
    "BudgetExhausted",
    "BudgetUsed",
    "CandidateRecord",
    "Engine",
    "EngineUnavailableError",
    "EvaluationRecord",
    "InMemoryLedger",
    "Ledger",
    "Meter",
    "MetricContractError",
    "OptimizationResult",
    "OptimizationSpec",
    "Progress",
    "ReflectionRecord",
    "SealedSplitError",
    "Splits",
    "artifact_from",
    "auto_choice",
    "candidate_digest",
    "check_optimize_config",
    "engine_named",
    "is_dspy_program",
    "load_optimize_config",
    "new_text_from",
    "optimize_spec_from_mapping",
    "reflection_prompt",
    "register_engine",
    "release_version",
    "run_optimization",
    "split_dataset",
    "split_rows",
]


__getattr__ = names_on_first_use(__name__, _EXPORTS, globals())
