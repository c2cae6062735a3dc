"""The evaluators a run configuration can name directly."""

from __future__ import annotations

from collections.abc import Callable

from oloproof_core.evaluators._base import Evaluator
from oloproof_core.evaluators._contains import Contains
from oloproof_core.evaluators._exact_match import ExactMatch
from oloproof_core.evaluators._json_schema import JsonSchema
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
