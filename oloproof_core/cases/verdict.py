"""A verdict: one evaluator's judgement of one case."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from oloproof_core._util.limits import storable_text


@dataclass(frozen=True, slots=True)
class Verdict:
    """`value` is 1.0/0.0 for pass/fail criteria and the score otherwise.

    A verdict whose `value` is None is missing: the system or the evaluator failed
    on this case, and `error` says why. Missing is never the same as wrong.
    """

    value: float | None
    feedback: str | None = None
    scores: Mapping[str, float] = field(default_factory=dict)
    error: str | None = None
    traceback: str | None = None
    cached: bool = False

    def __reduce__(self) -> tuple[Any, ...]:
        # Pickled as its fields (see `CaseResult.__reduce__`).
        fields = (self.value, self.feedback, self.scores, self.error, self.traceback, self.cached)
        return (Verdict, fields)

    @property
    def missing(self) -> bool:
        return self.value is None

    @property
    def passed(self) -> bool | None:
        return None if self.value is None else self.value >= 1.0

    @classmethod
    def failed_to_judge(cls, error: str, traceback: str | None = None) -> Verdict:
        # An error's text is shown to people, never scored: kept as every database keeps
        # it (an exception's message may hold a NUL, which PostgreSQL refuses).
        return cls(
            value=None,
            error=storable_text(error),
            traceback=None if traceback is None else storable_text(traceback),
        )

    def without_feedback(self) -> Verdict:
        """The verdict's figures and error, without its feedback or traceback."""
        if self.feedback is None and self.traceback is None:
            return self
        if self.value == 1.0 and not self.scores and self.error is None and not self.cached:
            return PASSED
        return Verdict(value=self.value, scores=self.scores, error=self.error, cached=self.cached)

    def to_dict(self) -> dict[str, Any]:
        return {
            "value": self.value,
            "feedback": self.feedback,
            "scores": dict(self.scores),
            "error": self.error,
            "traceback": self.traceback,
            "cached": self.cached,
        }

    def to_cache(self) -> dict[str, Any]:
        """What the verdict cache stores: only successful judgements are cached."""
        return {"value": self.value, "feedback": self.feedback, "scores": dict(self.scores)}

    @classmethod
    def from_cache(cls, data: Mapping[str, Any]) -> Verdict:
        return cls(
            value=data["value"],
            feedback=data.get("feedback"),
            scores=dict(data.get("scores") or {}),
            cached=True,
        )


PASSED = Verdict(value=1.0)
"""The verdict of every plain pass; shared, since verdicts are immutable."""
