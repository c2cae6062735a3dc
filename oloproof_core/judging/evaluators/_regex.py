"""Regex: the output text matches a regular expression."""

from __future__ import annotations

import re
from typing import Any

from oloproof_core.cases.verdict import PASSED, Verdict
from oloproof_core.errors import DeclarationError
from oloproof_core.judging.evaluators._base import Evaluator
from oloproof_core.judging.evaluators._case_view import CaseView
from oloproof_core.judging.evaluators._fields import as_text, pick


class Regex(Evaluator):
    """Passes when `pattern` is found in the output text (or matches all of it with full_match)."""

    def __init__(
        self,
        *,
        criterion: str = "regex",
        pattern: str,
        field: str | None = None,
        full_match: bool = False,
        ignore_case: bool = False,
        per_turn: bool = False,
    ) -> None:
        super().__init__(criterion=criterion, reads=("output",), per_turn=per_turn)
        try:
            self._compiled = re.compile(pattern, re.IGNORECASE if ignore_case else 0)
        except re.error as exc:
            raise DeclarationError(
                f"Regex(criterion={criterion!r}): invalid pattern {pattern!r}: {exc}"
            ) from None
        self.pattern = pattern
        self.field = field
        self.full_match = full_match
        self.ignore_case = ignore_case

    def parameters(self) -> dict[str, Any]:
        return {
            "pattern": self.pattern,
            "field": self.field,
            "full_match": self.full_match,
            "ignore_case": self.ignore_case,
        }

    def judge(self, case: CaseView) -> Verdict:
        text = as_text(pick(case.output, self.field, "the output"))
        match = (self._compiled.fullmatch if self.full_match else self._compiled.search)(text)
        if match:
            return PASSED
        how = "match all of" if self.full_match else "contain a match for"
        return Verdict(value=0.0, feedback=f"The output does not {how} /{self.pattern}/.")
