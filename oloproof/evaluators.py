"""The evaluators a run can use, and `@evaluator` for writing your own.

Each name is the engine's, imported on first use (see `oloproof_core.evaluators`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import oloproof_core.evaluators as _engine

if TYPE_CHECKING:
    from oloproof_core.evaluators import (
        CaseView,
        Contains,
        Evaluator,
        ExactMatch,
        JsonSchema,
        MetricFile,
        Regex,
        RubricJudge,
        evaluator,
    )

__all__ = [
    "CaseView",
    "Contains",
    "Evaluator",
    "ExactMatch",
    "JsonSchema",
    "MetricFile",
    "Regex",
    "RubricJudge",
    "evaluator",
]


def __getattr__(name: str) -> Any:
    if name not in __all__:
        raise AttributeError(f"module 'oloproof.evaluators' has no attribute {name!r}")
    value = getattr(_engine, name)
    globals()[name] = value
    return value
