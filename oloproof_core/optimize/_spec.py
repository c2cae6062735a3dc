"""What an optimization is asked to do: the system, the data, the metric and the budget."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from oloproof_core.evaluation.plan import DatasetSource
from oloproof_core.judging.evaluators import Evaluator
from oloproof_core.optimize._budget import Budget

Progress = Callable[[str, Mapping[str, Any]], None]
"""Called as progress(event, details): "started", "candidate", "proving", "finished"."""


@dataclass
class OptimizationSpec:
    system: Any
    dataset: DatasetSource
    evaluators: Sequence[Evaluator]
    budget: Budget
    engine: str = "auto"
    components: Mapping[str, str] | None = None
    splits: Mapping[str, float] | None = None
    objective: str | None = None
    policy: Any = None
    concurrency: int | None = None
    timeout: float | None = None
    confidence: float = 0.95
    repeats: int = 1
    """How many times each case runs, in the search and in the proof on test."""
    judge_repeats: int = 1
    """How many times each model judge judges each output, wherever a candidate is judged."""
    seed: int = 0
    settings: Mapping[str, Any] = field(default_factory=dict)
    name: str | None = None
    version: str | None = None
    config: Mapping[str, Any] = field(default_factory=dict)
    sandbox: str | None = None
    memory_limit_mb: int | None = None
