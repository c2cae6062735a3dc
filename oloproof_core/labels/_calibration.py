"""How far a judge agrees with people, or one person with another, on one metric.

Pass/fail: raw agreement, Cohen's kappa, and the judge's false-pass rate (it
passed what people failed) and false-fail rate (it failed what people passed).
A case whose people split evenly has no pass/fail truth and is left out of these.
Scores: the correlation and the mean absolute difference. Every figure carries
its interval (``oloproof_core.stats._agreement`` says which are exact).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from oloproof_core.stats import (
    AgreementFigure,
    correlation_figure,
    kappa_figure,
    mean_abs_difference_figure,
    proportion_figure,
)

__all__ = ["Calibration", "calibrate", "judge_against_people", "person_against_person"]


@dataclass(frozen=True, slots=True)
class Calibration:
    """Agreement of a rater (`judge`) with people on `n` labelled cases."""

    value_type: str
    n: int
    confidence: float
    figures: dict[str, AgreementFigure] = field(default_factory=dict)

    def __getattr__(self, name: str) -> AgreementFigure:
        try:
            return self.figures[name]
        except KeyError:
            raise AttributeError(name) from None

    def to_dict(self) -> dict[str, Any]:
        return {
            "value_type": self.value_type,
            "n": self.n,
            "confidence": self.confidence,
            **{name: figure.to_dict() for name, figure in self.figures.items()},
        }


def calibrate(
    judge: Sequence[float],
    human: Sequence[float],
    *,
    value_type: str,
    score_range: tuple[float, float],
    confidence: float,
) -> Calibration:
    """Agreement figures of `judge` against `human`, one pair per labelled case."""
    if len(judge) != len(human):
        raise ValueError(f"{len(judge)} verdicts but {len(human)} labels")
    if value_type == "pass_fail":
        return _pass_fail(judge, human, score_range, confidence)
    low, high = score_range
    figures = {
        "correlation": correlation_figure(judge, human, confidence),
        "mean_abs_difference": mean_abs_difference_figure(judge, human, low, high, confidence),
    }
    return Calibration(value_type, len(judge), confidence, figures)


def _pass_fail(
    judge: Sequence[float],
    human: Sequence[float],
    score_range: tuple[float, float],
    confidence: float,
) -> Calibration:
    middle = (score_range[0] + score_range[1]) / 2.0
    pairs = [(a >= middle, b > middle) for a, b in zip(judge, human, strict=True) if b != middle]
    judged = [a for a, _ in pairs]
    truth = [b for _, b in pairs]
    agreed = sum(a == b for a, b in pairs)
    people_failed = [a for a, b in pairs if not b]
    people_passed = [a for a, b in pairs if b]
    figures = {
        "agreement": proportion_figure(agreed, len(pairs), confidence),
        "kappa": kappa_figure(judged, truth, confidence),
        "false_pass_rate": proportion_figure(sum(people_failed), len(people_failed), confidence),
        "false_fail_rate": proportion_figure(
            sum(not a for a in people_passed), len(people_passed), confidence
        ),
    }
    return Calibration("pass_fail", len(pairs), confidence, figures)


def judge_against_people(
    judged: Mapping[str, float | None],
    truth: Mapping[str, float],
    *,
    value_type: str,
    score_range: tuple[float, float],
    confidence: float,
) -> Calibration | None:
    """The judge's verdict (case id -> value, None where missing) against people's value,
    over every labelled case the judge has a verdict on; None when there is none."""
    pairs = [
        (value, truth[case])
        for case, value in judged.items()
        if value is not None and case in truth
    ]
    return person_against_person(
        pairs, value_type=value_type, score_range=score_range, confidence=confidence
    )


def person_against_person(
    pairs: Sequence[tuple[float, float]],
    *,
    value_type: str,
    score_range: tuple[float, float],
    confidence: float,
) -> Calibration | None:
    """One rater against another, one pair of values per case; None without pairs."""
    if not pairs:
        return None
    return calibrate(
        [first for first, _ in pairs],
        [second for _, second in pairs],
        value_type=value_type,
        score_range=score_range,
        confidence=confidence,
    )
