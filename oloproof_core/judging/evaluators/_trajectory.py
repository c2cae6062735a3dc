"""ToolUsed and StepCount: what an agent did on the way, read from its transcript.

Both read only `trace`, so their verdicts are cached on the transcript's digest: the same
conversation is judged once, whatever its calls took or cost.
"""

from __future__ import annotations

from typing import Any

from oloproof_core.cases.verdict import PASSED, Verdict
from oloproof_core.errors import DeclarationError
from oloproof_core.judging.evaluators._base import Evaluator
from oloproof_core.judging.evaluators._case_view import CaseView


def _count_or_none(value: Any, name: str, owner: str) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise DeclarationError(f"{owner}: {name} is a whole number ≥ 0, got {value!r}")
    return value


class ToolUsed(Evaluator):
    """Passes when the models asked for `tool` at least `min_times` times (and, with
    `max_times`, at most that many)."""

    def __init__(
        self,
        *,
        criterion: str = "tool_used",
        tool: str,
        min_times: int = 1,
        max_times: int | None = None,
    ) -> None:
        super().__init__(criterion=criterion, reads=("trace",))
        owner = f"ToolUsed(criterion={criterion!r})"
        if not isinstance(tool, str) or not tool:
            raise DeclarationError(f"{owner}: tool is the tool's name, e.g. tool='search'")
        self.tool = tool
        self.min_times = _count_or_none(min_times, "min_times", owner) or 0
        self.max_times = _count_or_none(max_times, "max_times", owner)

    def parameters(self) -> dict[str, Any]:
        return {"tool": self.tool, "min_times": self.min_times, "max_times": self.max_times}

    def judge(self, case: CaseView) -> Verdict:
        called = case.trace.tool_names()
        times = called.count(self.tool)
        if times >= self.min_times and (self.max_times is None or times <= self.max_times):
            return PASSED
        wanted = f"at least {self.min_times}"
        if self.max_times is not None:
            wanted += f" and at most {self.max_times}"
        others = ", ".join(called) if called else "no tool at all"
        return Verdict(
            value=0.0,
            feedback=f"{self.tool!r} was called {times} times ({wanted} wanted); "
            f"the calls were: {others}.",
        )


class StepCount(Evaluator):
    """Passes when the transcript stays within the given counts: model calls, tool calls,
    steps of any kind. At least one bound is needed."""

    def __init__(
        self,
        *,
        criterion: str = "step_count",
        max_model_calls: int | None = None,
        max_tool_calls: int | None = None,
        max_steps: int | None = None,
    ) -> None:
        super().__init__(criterion=criterion, reads=("trace",))
        owner = f"StepCount(criterion={criterion!r})"
        self.bounds = {
            "model calls": _count_or_none(max_model_calls, "max_model_calls", owner),
            "tool calls": _count_or_none(max_tool_calls, "max_tool_calls", owner),
            "steps": _count_or_none(max_steps, "max_steps", owner),
        }
        if all(bound is None for bound in self.bounds.values()):
            raise DeclarationError(
                f"{owner} needs a bound: max_model_calls, max_tool_calls or max_steps"
            )

    def parameters(self) -> dict[str, Any]:
        return {name.replace(" ", "_"): bound for name, bound in self.bounds.items()}

    def judge(self, case: CaseView) -> Verdict:
        trace = case.trace
        counts = {
            "model calls": len(trace.model_calls),
            "tool calls": len(trace.tool_calls()),
            "steps": len(trace.steps),
        }
        over = [
            f"{counts[name]} {name} (at most {bound} allowed)"
            for name, bound in self.bounds.items()
            if bound is not None and counts[name] > bound
        ]
        if not over:
            return PASSED
        return Verdict(value=0.0, feedback="Too many: " + "; ".join(over) + ".")
