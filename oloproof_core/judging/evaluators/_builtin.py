"""The evaluators a run configuration can name directly."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from oloproof_core.judging.evaluators._base import Evaluator

_NAMES = ("ExactMatch", "Contains", "Regex", "JsonSchema", "RubricJudge")


class _BuiltinEvaluators(Mapping[str, "Callable[..., Evaluator]"]):
    """Each evaluator's class, from the package's names on first use: a run that only
    compares labels does not load `RubricJudge`'s model client (asyncio, sockets, TLS)."""

    def __getitem__(self, name: str) -> Callable[..., Evaluator]:
        if name not in _NAMES:
            raise KeyError(name)
        from oloproof_core.judging import evaluators  # the package: loaded before this module

        found: Callable[..., Evaluator] = getattr(evaluators, name)
        return found

    def __iter__(self) -> Iterator[str]:
        return iter(_NAMES)

    def __len__(self) -> int:
        return len(_NAMES)


BUILTIN_EVALUATORS: Mapping[str, Callable[..., Evaluator]] = _BuiltinEvaluators()
"""Evaluators a run configuration can name directly, by name."""
