"""The evaluators a run configuration can name directly."""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterator, Mapping
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from oloproof_core.judging.evaluators._base import Evaluator

_MODULES = {
    "ExactMatch": "_exact_match",
    "Contains": "_contains",
    "Regex": "_regex",
    "JsonSchema": "_json_schema",
    "RubricJudge": "_rubric_judge",
    "ToolUsed": "_trajectory",
    "ToolSequence": "_tool_sequence",
    "StepCount": "_trajectory",
    "CaseBudget": "_case_budget",
    "TrajectoryJudge": "_trajectory_judge",
    "WorkspaceCommand": "_workspace_command",
}
"""Each name's module in this package, imported when the name is first asked for."""
_NAMES = tuple(_MODULES)


class _BuiltinEvaluators(Mapping[str, "Callable[..., Evaluator]"]):
    """Each evaluator's class, its module imported on first use: a run that only compares
    labels does not load `RubricJudge`'s model client (asyncio, sockets, TLS)."""

    def __getitem__(self, name: str) -> Callable[..., Evaluator]:
        if name not in _NAMES:
            raise KeyError(name)
        module = importlib.import_module(f"{__package__}.{_MODULES[name]}")
        found: Callable[..., Evaluator] = getattr(module, name)
        return found

    def __iter__(self) -> Iterator[str]:
        return iter(_NAMES)

    def __len__(self) -> int:
        return len(_NAMES)


BUILTIN_EVALUATORS: Mapping[str, Callable[..., Evaluator]] = _BuiltinEvaluators()
"""Evaluators a run configuration can name directly, by name."""
