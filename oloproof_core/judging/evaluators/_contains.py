"""Contains: the output text contains a given or expected substring."""

from __future__ import annotations

from typing import Any

from oloproof_core.cases.verdict import PASSED, Verdict
from oloproof_core.errors import DeclarationError
from oloproof_core.judging.evaluators._base import Evaluator
from oloproof_core.judging.evaluators._case_view import CaseView
from oloproof_core.judging.evaluators._fields import as_text, pick


class Contains(Evaluator):
    """Passes when the output text (or `output[field]`) contains the wanted text.

    The wanted text is `value=` when given (then only the output is read), else
    `expected[expected_field]`. Matching ignores case unless `ignore_case=False`.
    """

    def __init__(
        self,
        *,
        criterion: str = "contains",
        value: str | None = None,
        field: str | None = None,
        expected_field: str | None = None,
        ignore_case: bool = True,
        per_turn: bool = False,
    ) -> None:
        if value is None and expected_field is None:
            raise DeclarationError(
                f"Contains(criterion={criterion!r}) needs value='text' or "
                "expected_field='name' to know what to look for"
            )
        reads = ("output",) if value is not None else ("output", "expected")
        super().__init__(criterion=criterion, reads=reads, per_turn=per_turn)
        self.value = value
        self.field = field
        self.expected_field = expected_field
        self.ignore_case = ignore_case

    def parameters(self) -> dict[str, Any]:
        return {
            "value": self.value,
            "field": self.field,
            "expected_field": self.expected_field,
            "ignore_case": self.ignore_case,
        }

    def judge(self, case: CaseView) -> Verdict:
        text = as_text(pick(case.output, self.field, "the output"))
        wanted = (
            self.value
            if self.value is not None
            else as_text(pick(case.expected, self.expected_field, "the expected object"))
        )
        found = wanted.casefold() in text.casefold() if self.ignore_case else wanted in text
        if found:
            return PASSED
        return Verdict(value=0.0, feedback=f"The output does not contain {wanted!r}.")
