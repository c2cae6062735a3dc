"""ExactMatch: the output (or one field of it) equals the expected value."""

from __future__ import annotations

from typing import Any

from oloproof_core.cases.verdict import PASSED, Verdict
from oloproof_core.judging.evaluators._base import Evaluator
from oloproof_core.judging.evaluators._case_view import CaseView
from oloproof_core.judging.evaluators._fields import as_text, pick


class ExactMatch(Evaluator):
    """Passes when `output[field]` equals `expected[expected_field or field]`.

    Without `field` the whole output is compared with the whole expected object.
    `ignore_case` and `strip` normalise strings before comparing.
    """

    def __init__(
        self,
        *,
        criterion: str = "exact_match",
        field: str | None = None,
        expected_field: str | None = None,
        ignore_case: bool = False,
        strip: bool = False,
        per_turn: bool = False,
    ) -> None:
        super().__init__(criterion=criterion, reads=("output", "expected"), per_turn=per_turn)
        self.field = field
        self.expected_field = expected_field if expected_field is not None else field
        self.ignore_case = ignore_case
        self.strip = strip

    def parameters(self) -> dict[str, Any]:
        return {
            "field": self.field,
            "expected_field": self.expected_field,
            "ignore_case": self.ignore_case,
            "strip": self.strip,
        }

    def _normalise(self, value: Any) -> Any:
        if isinstance(value, str):
            if self.strip:
                value = value.strip()
            if self.ignore_case:
                value = value.casefold()
        return value

    def judge(self, case: CaseView) -> Verdict:
        got = pick(case.output, self.field, "the output")
        want = pick(case.expected, self.expected_field, "the expected object")
        if self._normalise(got) == self._normalise(want):
            return PASSED
        return Verdict(value=0.0, feedback=f"Expected {as_text(want)!r}, got {as_text(got)!r}.")
