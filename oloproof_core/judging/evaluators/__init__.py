"""Evaluators: the criteria a case is judged on.

Each name is imported on first use: a system's module that imports `evaluator` beside
its system does not load, in the system's own process, the model client behind
`RubricJudge` and `MetricFile` (asyncio, sockets, TLS).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from oloproof_core._util.names_on_first_use import names_on_first_use

if TYPE_CHECKING:
    from oloproof_core.cases.transcript import Transcript
    from oloproof_core.judging.evaluators._base import Evaluator, ValueType
    from oloproof_core.judging.evaluators._builtin import BUILTIN_EVALUATORS
    from oloproof_core.judging.evaluators._case_budget import CaseBudget
    from oloproof_core.judging.evaluators._case_view import CaseView
    from oloproof_core.judging.evaluators._contains import Contains
    from oloproof_core.judging.evaluators._exact_match import ExactMatch
    from oloproof_core.judging.evaluators._function import FunctionEvaluator, evaluator
    from oloproof_core.judging.evaluators._json_schema import JsonSchema
    from oloproof_core.judging.evaluators._metric_file import MetricFile
    from oloproof_core.judging.evaluators._regex import Regex
    from oloproof_core.judging.evaluators._rubric_judge import RubricJudge
    from oloproof_core.judging.evaluators._tool_sequence import ToolSequence
    from oloproof_core.judging.evaluators._trajectory import StepCount, ToolUsed
    from oloproof_core.judging.evaluators._trajectory_judge import TrajectoryJudge
    from oloproof_core.judging.evaluators._workspace_command import WorkspaceCommand

_EXPORTS: dict[str, str] = {
    "BUILTIN_EVALUATORS": "._builtin",
    "CaseBudget": "._case_budget",
    "CaseView": "._case_view",
    "Contains": "._contains",
    "Evaluator": "._base",
    "ExactMatch": "._exact_match",
    "FunctionEvaluator": "._function",
    "JsonSchema": "._json_schema",
    "MetricFile": "._metric_file",
    "Regex": "._regex",
    "RubricJudge": "._rubric_judge",
    "StepCount": "._trajectory",
    "ToolSequence": "._tool_sequence",
    "ToolUsed": "._trajectory",
    "TrajectoryJudge": "._trajectory_judge",
    "Transcript": "oloproof_core.cases.transcript",
    "ValueType": "._base",
    "WorkspaceCommand": "._workspace_command",
    "evaluator": "._function",
}

__all__ = [
    "BUILTIN_EVALUATORS",
    "CaseBudget",
    "CaseView",
    "Contains",
    "Evaluator",
    "ExactMatch",
    "FunctionEvaluator",
    "JsonSchema",
    "MetricFile",
    "Regex",
    "RubricJudge",
    "StepCount",
    "ToolSequence",
    "ToolUsed",
    "TrajectoryJudge",
    "Transcript",
    "ValueType",
    "WorkspaceCommand",
    "evaluator",
]

__getattr__ = names_on_first_use(__name__, _EXPORTS, globals())
