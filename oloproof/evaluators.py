"""The evaluators a run can use, and `@evaluator` for writing your own.

Each name is the engine's, imported on first use (see `oloproof_core.judging.evaluators`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from oloproof_core import names_on_first_use

if TYPE_CHECKING:
    from oloproof_core.judging.evaluators import (
        CaseBudget,
        CaseView,
        Contains,
        Evaluator,
        ExactMatch,
        JsonSchema,
        MetricFile,
        Regex,
        RubricJudge,
        StepCount,
        ToolSequence,
        ToolUsed,
        TrajectoryJudge,
        Transcript,
        WorkspaceCommand,
        evaluator,
    )

__all__ = [
    "CaseBudget",
    "CaseView",
    "Contains",
    "Evaluator",
    "ExactMatch",
    "JsonSchema",
    "MetricFile",
    "Regex",
    "RubricJudge",
    "StepCount",
    "ToolSequence",
    "ToolUsed",
    "TrajectoryJudge",
    "Transcript",
    "WorkspaceCommand",
    "evaluator",
]

__getattr__ = names_on_first_use(
    __name__, dict.fromkeys(__all__, "oloproof_core.judging.evaluators"), globals()
)
