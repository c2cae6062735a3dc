"""Evaluators: the criteria a case is judged on."""

from collections.abc import Callable

from oloproof_core.evaluators._base import Evaluator, ValueType
from oloproof_core.evaluators._case_view import CaseView
from oloproof_core.evaluators._contains import Contains
from oloproof_core.evaluators._exact_match import ExactMatch
from oloproof_core.evaluators._function import FunctionEvaluator, evaluator
from oloproof_core.evaluators._json_schema import JsonSchema
from oloproof_core.evaluators._metric_file import MetricFile
from oloproof_core.evaluators._regex import Regex
from oloproof_core.evaluators._rubric_judge import RubricJudge

BUILTIN_EVALUATORS: dict[str, Callable[..., Evaluator]] = {
    "ExactMatch": ExactMatch,
    "Contains": Contains,
    "Regex": Regex,
    "JsonSchema": JsonSchema,
    "RubricJudge": RubricJudge,
}
"""Evaluators a run configuration can name directly."""

__all__ = [
    "BUILTIN_EVALUATORS",
    "CaseView",
    "Contains",
    "Evaluator",
    "ExactMatch",
    "FunctionEvaluator",
    "JsonSchema",
    "MetricFile",
    "Regex",
    "RubricJudge",
    "ValueType",
    "evaluator",
]
