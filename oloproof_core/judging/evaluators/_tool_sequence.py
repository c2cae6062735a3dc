"""ToolSequence: the tools an agent called, against the list a case expects.

Match modes, over the tools' names as called (a tool called twice counts twice):

- `strict`: the same tools in the same order;
- `unordered`: the same tools, in any order;
- `subset`: every call the agent made is one the expected list has (it did nothing else);
- `superset`: every expected call was made (other calls besides are fine).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any

from oloproof_core.cases.verdict import PASSED, Verdict
from oloproof_core.errors import ContractError, DeclarationError
from oloproof_core.judging.evaluators._base import Evaluator
from oloproof_core.judging.evaluators._case_view import CaseView

MATCH_MODES = ("strict", "unordered", "subset", "superset")


def sequence_matches(called: Sequence[str], expected: Sequence[str], match: str) -> bool:
    """Whether the tools `called` match the `expected` ones under `match` (module docstring)."""
    if match == "strict":
        return list(called) == list(expected)
    made, wanted = Counter(called), Counter(expected)
    if match == "unordered":
        return made == wanted
    if match == "subset":
        return made <= wanted
    if match == "superset":
        return made >= wanted
    raise ValueError(f"unknown match mode {match!r}; modes are {', '.join(MATCH_MODES)}")


class ToolSequence(Evaluator):
    """Passes when the tools called match `expected[field]` (a list of tool names)."""

    def __init__(
        self, *, criterion: str = "tool_sequence", field: str = "tools", match: str = "strict"
    ) -> None:
        super().__init__(criterion=criterion, reads=("trace", "expected"))
        if match not in MATCH_MODES:
            raise DeclarationError(
                f"ToolSequence(criterion={criterion!r}): match is one of "
                f"{', '.join(MATCH_MODES)}, got {match!r}"
            )
        self.field = field
        self.match = match

    def parameters(self) -> dict[str, Any]:
        return {"field": self.field, "match": self.match}

    def judge(self, case: CaseView) -> Verdict:
        expected = (case.expected or {}).get(self.field)
        if not isinstance(expected, list) or not all(isinstance(name, str) for name in expected):
            raise ContractError(
                f"ToolSequence {self.criterion!r} needs the case's expected "
                f"{self.field!r} as a list of tool names, e.g. "
                f'"expected": {{"{self.field}": ["search", "lookup"]}}; got {expected!r}'
            )
        called = case.trace.tool_names()
        if sequence_matches(called, expected, self.match):
            return PASSED
        return Verdict(
            value=0.0,
            feedback=f"The tools called {called} do not match the expected {expected} "
            f"({self.match}: {_meaning(self.match)}).",
        )


def _meaning(match: str) -> str:
    return {
        "strict": "the same tools in the same order",
        "unordered": "the same tools in any order",
        "subset": "only tools the expected list has",
        "superset": "every expected tool, others allowed",
    }[match]
