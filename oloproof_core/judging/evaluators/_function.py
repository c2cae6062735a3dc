"""`@evaluator`: turn a one-argument function over the case into an evaluator."""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any, overload

from oloproof_core.errors import DeclarationError
from oloproof_core.judging.evaluators._base import Evaluator, ValueType
from oloproof_core.judging.evaluators._case_view import CaseView

DEFAULT_READS = ("output", "expected")

_WORKING_FORM = """\
    @evaluator(criterion="known_label", reads=("output",))
    def known_label(case):
        return case.output["label"] in {"refund", "other"}

The function takes one argument, the case, and reads what it needs from it:
case.output (what the system returned), case.expected (the row's expected object),
case.input and case.artifacts."""


class FunctionEvaluator(Evaluator):
    def __init__(
        self,
        fn: Callable[[CaseView], Any],
        *,
        criterion: str,
        reads: tuple[str, ...],
        value_type: ValueType,
        score_range: tuple[float, float],
        io_bound: bool,
        per_turn: bool = False,
    ) -> None:
        super().__init__(
            criterion=criterion,
            reads=reads,
            value_type=value_type,
            score_range=score_range,
            per_turn=per_turn,
        )
        self.fn = fn
        # An async function waits by definition: its cases share one event loop.
        self.is_async = inspect.iscoroutinefunction(fn)
        self.io_bound = io_bound or self.is_async
        self.__doc__ = fn.__doc__
        self.__wrapped__ = fn

    @property
    def kind(self) -> str:
        return "function"

    def parameters(self) -> dict[str, Any]:
        return {"function": getattr(self.fn, "__qualname__", repr(self.fn))}

    def source_object(self) -> Any:
        return self.fn

    def judge(self, case: CaseView) -> Any:
        return self.fn(case)

    def __call__(self, case: CaseView) -> Any:
        return self.fn(case)


@overload
def evaluator(fn: Callable[[CaseView], Any], /) -> FunctionEvaluator: ...
@overload
def evaluator(
    *,
    criterion: str | None = ...,
    reads: tuple[str, ...] = ...,
    value_type: ValueType = ...,
    score_range: tuple[float, float] = ...,
    io_bound: bool = ...,
    per_turn: bool = ...,
) -> Callable[[Callable[[CaseView], Any]], FunctionEvaluator]: ...


def evaluator(
    fn: Callable[[CaseView], Any] | None = None,
    /,
    *,
    criterion: str | None = None,
    reads: tuple[str, ...] = DEFAULT_READS,
    value_type: ValueType = "pass_fail",
    score_range: tuple[float, float] = (0.0, 1.0),
    io_bound: bool = False,
    per_turn: bool = False,
) -> Any:
    """Declare a function of one argument, the case, as an evaluator.

    It returns True/False, or with value_type="score" a number within score_range.
    `reads` names the case parts it reads; the verdict cache keys on exactly those.
    `per_turn=True` judges a conversation turn by turn (`oloproof_core.judging.turns`).
    """

    def declare(function: Callable[[CaseView], Any]) -> FunctionEvaluator:
        _check_one_argument(function)
        return FunctionEvaluator(
            function,
            criterion=criterion or function.__name__,
            reads=reads,
            value_type=value_type,
            score_range=score_range,
            io_bound=io_bound,
            per_turn=per_turn,
        )

    if fn is not None:
        return declare(fn)
    return declare


def _check_one_argument(fn: Callable[..., Any]) -> None:
    if not callable(fn):
        raise DeclarationError(f"@evaluator decorates a function, got {type(fn).__name__}")
    signature = inspect.signature(fn)
    positional = [
        p
        for p in signature.parameters.values()
        if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
    ]
    required = [
        p
        for p in signature.parameters.values()
        if p.default is p.empty and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)
    ]
    if (
        len(positional) >= 1
        and len(required) <= 1
        and (not required or required[0] is positional[0])
    ):
        return
    raise DeclarationError(
        f"@evaluator function {fn.__name__}{signature} must take exactly one argument, the "
        f"case. Write it like this:\n\n{_WORKING_FORM}"
    )
