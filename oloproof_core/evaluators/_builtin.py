"""The evaluators a run configuration can name directly."""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterator, Mapping
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from oloproof_core.evaluators._base import Evaluator

_MODULES = {
    "ExactMatch": "._exact_match",
    "Contains": "._contains",
    "Regex": "._regex",
    "JsonSchema": "._json_schema",
    "RubricJudge": "._rubric_judge",
}


class _BuiltinEvaluators(Mapping[str, "Callable[..., Evaluator]"]):
    """Each evaluator's class, imported when a configuration names it: a run that only
    compares labels does not load `RubricJudge`'s model client (asyncio, sockets, TLS)."""

    def __getitem__(self, name: str) -> Callable[..., Evaluator]:
        found: Callable[..., Evaluator] = getattr(
            importlib.import_module(_MODULES[name], __package__), name
        )
        return found

    def __iter__(self) -> Iterator[str]:
        return iter(_MODULES)

    def __len__(self) -> int:
        return len(_MODULES)


BUILTIN_EVALUATORS: Mapping[str, Callable[..., Evaluator]] = _BuiltinEvaluators()
"""Evaluators a run configuration can name directly, by name."""
