"""The evaluators a run can use, and `@evaluator` for writing your own."""

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
