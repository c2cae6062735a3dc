"""A judge-scored metric's figure once people have labelled some of the queue's draws.

The queue's draws are used in order, up to the first whose case has no label for
this run's output: the draws used are then exactly the first ``k`` of a random
sequence fixed before anyone labelled, whatever order people worked in and however
their labels came (the queue, the library, a file). A draw that landed on a missing
case is passed over; the rest stay i.i.d. (see
``oloproof_core.stats._prediction_powered``, which computes the interval).

People's labels also bound the figure by themselves, with certainty: every labelled
case at its people's value and every other case at its worst and best. The interval
is the prediction-powered one within that range, so it closes as the cases run out:
once every case the judge scored is labelled, the figure is the people's, exact (the
missing cases still at their worst and best), and nothing is left to estimate.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from oloproof_core.labels._sampling import Draw
from oloproof_core.stats import (
    DIFFERENCE_TUNING,
    SCORE_TUNING,
    BetTuning,
    Interval,
    prediction_powered_interval,
)

__all__ = ["LabelledEstimate", "labelled_difference", "labelled_estimate"]

METHOD = (
    "prediction-powered: judge verdicts + labelled random draws, leaning on the judge as far"
    " as the labels show it agrees (betting, finite-sample)"
)
BY_VERDICT_METHOD = (
    "prediction-powered within the judge's two verdicts: people's pass rate among the cases"
    " the judge passed and among those it failed, from labelled random draws, weighed by"
    " the judge's shares (exact test, finite-sample)"
)
KNOWN_METHOD = "people's labels of every case: the figure is theirs, exact, not estimated"


def tuning_for(value_type: str) -> BetTuning:
    """The bets on the judge's corrections, chosen by the metric's kind before any label.

    A score judge's corrections are small and spread evenly about zero, which the bolder
    tuning for differences bets on best, whether the interval leans on the judge fully
    or learns how far; a pass/fail judge's are mostly zero with a few of -1 or +1, where
    the scores' tuning loses less (bench/README.md, "Labels and the judge").
    """
    return SCORE_TUNING if value_type == "pass_fail" else DIFFERENCE_TUNING


@dataclass(frozen=True, slots=True)
class LabelledEstimate:
    """A figure from judge verdicts and people's labels, in the metric's own units.

    For a comparison (`labelled_difference`) the figure is candidate minus baseline.
    `judge_bias` covers the mean of (people's value - judge's value) over the
    observed cases. `next_position` is the first draw still waiting for a label.
    `known`: people labelled every case the judge scored, so the figure is theirs,
    exact (`n_labels` then counts the labelled cases, and only missing cases keep the
    interval open). `cases_left` is how many cases the judge scored that no one has
    labelled: no readout asks for more labels than that.
    """

    estimate: float
    interval: Interval
    judge_bias: Interval
    method: str
    confidence: float
    n_labels: int
    next_position: int | None
    n_observed: int
    n_missing: int
    known: bool = False
    cases_left: int = 0
    n_unlabelled: int = 0
    """Cases without a people's value, the missing ones among them."""
    case_width: float = 0.0
    """The share of the interval's width one case without a people's value can hold."""

    @property
    def labels_text(self) -> str:
        """What the figure rests on, in words: the labelled draws, or every case labelled."""
        if not self.known:
            return f"{self.n_labels:,} labelled draw{'s' if self.n_labels != 1 else ''}"
        missing = f", {self.n_missing:,} missing" if self.n_missing else ""
        return f"all {self.n_labels:,} cases labelled{missing}: known, not estimated"

    def labels_needed(self, width: float) -> int | None:
        """About how many more labels bring the interval to `width`; never more than
        `cases_left`, since labelling them all leaves only the missing cases open.

        Two ways there, the fewer labels counted: the labels' share of the
        prediction-powered width shrinks as one over the square root of their number
        (the rest, the missing cases, does not move); and each case labelled takes its
        share out of the range people's labels allow. None when labels cannot reach
        `width` (the figure is known, or the missing cases alone are wider).
        """
        if not math.isfinite(width) or width < 0:
            return None
        if self.interval.width <= width:
            return 0
        if self.known or self.cases_left == 0:
            return None
        found = [
            count
            for count in (self._by_draws(width), self._by_cases(width))
            if count is not None and count <= self.cases_left
        ]
        return min(found, default=None)

    def _by_draws(self, width: float) -> int | None:
        if self.n_labels == 0 or width <= 0:
            return None
        share = self.judge_bias.width
        fixed = max(0.0, self.interval.width - share)
        if width <= fixed or share <= 0:
            return None
        total = self.n_labels * (share / (width - fixed)) ** 2
        return max(0, math.ceil(total) - self.n_labels)

    def _by_cases(self, width: float) -> int | None:
        if self.case_width <= 0:
            return None
        room = math.floor(width / self.case_width + 1e-9)
        if room < self.n_unlabelled - self.cases_left:
            return None  # the missing cases no one labelled are wider than `width`
        return max(0, self.n_unlabelled - room)

    def to_dict(self) -> dict[str, Any]:
        return {
            "estimate": self.estimate,
            "interval": {"lower": self.interval.lower, "upper": self.interval.upper},
            "judge_bias": {"lower": self.judge_bias.lower, "upper": self.judge_bias.upper},
            "method": self.method,
            "by_verdict": self.method == BY_VERDICT_METHOD,
            "confidence": self.confidence,
            "n_labels": self.n_labels,
            "next_position": self.next_position,
            "n_observed": self.n_observed,
            "n_missing": self.n_missing,
            "known": self.known,
            "cases_left": self.cases_left,
        }


def labelled_estimate(
    *,
    case_ids: Sequence[str],
    judge_values: Sequence[float | None],
    probabilities: Mapping[str, float],
    draws: Sequence[Draw],
    truth: Mapping[str, float],
    score_range: tuple[float, float],
    confidence: float,
    value_type: str = "pass_fail",
) -> LabelledEstimate | None:
    """The combined figure of one run's metric; None until the queue's first draw is
    labelled, unless every case the judge scored is (the figure is then known)."""
    low, high = score_range
    span = high - low
    units = {
        case: (value - low) / span
        for case, value in zip(case_ids, judge_values, strict=True)
        if value is not None
    }
    people = {case: (truth[case] - low) / span for case in case_ids if case in truth}
    return _figure(
        units=units,
        people=people,
        n_cases=len(case_ids),
        probabilities=probabilities,
        draws=draws,
        confidence=confidence,
        scale=(low, span),
        tuning=tuning_for(value_type),
        exact_labels=value_type == "pass_fail",
    )


def labelled_difference(
    *,
    case_ids: Sequence[str],
    baseline_values: Sequence[float | None],
    candidate_values: Sequence[float | None],
    probabilities: Mapping[str, float],
    draws: Sequence[Draw],
    baseline_truth: Mapping[str, float],
    candidate_truth: Mapping[str, float],
    score_range: tuple[float, float],
    confidence: float,
    value_type: str = "pass_fail",
) -> LabelledEstimate | None:
    """Candidate minus baseline on the same cases, from both runs' verdicts and labels.

    A draw counts once both runs' outputs of its case are labelled. Differences in
    ``[-span, span]`` are mapped onto ``[0, 1]`` for the interval and back.
    """
    low, high = score_range
    span = high - low
    units = {
        case: ((after - before) / span + 1.0) / 2.0
        for case, before, after in zip(case_ids, baseline_values, candidate_values, strict=True)
        if before is not None and after is not None
    }
    people = {
        case: ((candidate_truth[case] - baseline_truth[case]) / span + 1.0) / 2.0
        for case in case_ids
        if case in baseline_truth and case in candidate_truth
    }
    return _figure(
        units=units,
        people=people,
        n_cases=len(case_ids),
        probabilities=probabilities,
        draws=draws,
        confidence=confidence,
        scale=(-span, 2.0 * span),
        tuning=tuning_for(value_type),
        exact_labels=False,
    )


def _figure(
    *,
    units: Mapping[str, float],
    people: Mapping[str, float],
    n_cases: int,
    probabilities: Mapping[str, float],
    draws: Sequence[Draw],
    confidence: float,
    scale: tuple[float, float],
    tuning: BetTuning,
    exact_labels: bool,
) -> LabelledEstimate | None:
    """Known when people labelled every case with a verdict; else prediction-powered from
    the draws labelled in order, within the range people's labels allow."""
    if people and units.keys() <= people.keys():
        return _known(units, people, n_cases, confidence, scale)
    used, next_position = _used_draws(draws, units, people)
    if not used:
        return None
    observed = list(units)
    return _conclude(
        judge=[units[case] for case in observed],
        probabilities=[probabilities[case] for case in observed],
        index={case: i for i, case in enumerate(observed)},
        used=used,
        people=people,
        n_cases=n_cases,
        confidence=confidence,
        scale=scale,
        next_position=next_position,
        tuning=tuning,
        exact_labels=exact_labels,
    )


def _used_draws(
    draws: Sequence[Draw], observed: Mapping[str, float], people: Mapping[str, float]
) -> tuple[list[Draw], int | None]:
    """The draws in order up to the first unlabelled one, passing over missing cases."""
    used: list[Draw] = []
    for draw in sorted(draws, key=lambda d: d.position):
        if draw.case_id not in observed:
            continue
        if draw.case_id not in people:
            return used, draw.position
        used.append(draw)
    return used, None


def _unit(value: float) -> float:
    return min(1.0, max(0.0, value))


def _people_range(people: Mapping[str, float], n_cases: int) -> Interval:
    """On the unit scale, the mean over all cases with every case people did not label at
    its worst and at its best: it holds the people's figure whatever the draws."""
    total = sum(_unit(value) for value in people.values())
    return Interval(total / n_cases, (total + n_cases - len(people)) / n_cases)


def _known(
    units: Mapping[str, float],
    people: Mapping[str, float],
    n_cases: int,
    confidence: float,
    scale: tuple[float, float],
) -> LabelledEstimate:
    """Every case with a verdict is labelled: the people's figure, exact."""
    offset, span = scale
    exact = _people_range(people, n_cases)
    mean = sum(_unit(value) for value in people.values()) / len(people)
    bias = sum(_unit(people[case]) - _unit(units[case]) for case in units) / max(1, len(units))
    unlabelled = n_cases - len(people)
    return LabelledEstimate(
        estimate=offset + mean * span,
        interval=Interval(offset + exact.lower * span, offset + exact.upper * span),
        judge_bias=Interval(bias * span, bias * span),
        method=KNOWN_METHOD,
        confidence=confidence,
        n_labels=len(people),
        next_position=None,
        n_observed=len(people),
        n_missing=unlabelled,
        known=True,
        n_unlabelled=unlabelled,
        case_width=span / n_cases,
    )


def _conclude(
    *,
    judge: list[float],
    probabilities: list[float],
    index: Mapping[str, int],
    used: list[Draw],
    people: Mapping[str, float],
    n_cases: int,
    confidence: float,
    scale: tuple[float, float],
    next_position: int | None,
    tuning: BetTuning,
    exact_labels: bool,
) -> LabelledEstimate:
    offset, span = scale
    found = prediction_powered_interval(
        [_unit(value) for value in judge],
        probabilities,
        [index[draw.case_id] for draw in used],
        [_unit(people[draw.case_id]) for draw in used],
        n_cases - len(judge),
        confidence,
        tuning=tuning,
        exact_labels=exact_labels,
    )
    interval = _within(found.interval, _people_range(people, n_cases))
    estimate = min(interval.upper, max(interval.lower, found.estimate))
    return LabelledEstimate(
        estimate=offset + estimate * span,
        interval=Interval(offset + interval.lower * span, offset + interval.upper * span),
        judge_bias=Interval(found.rectifier.lower * span, found.rectifier.upper * span),
        method=BY_VERDICT_METHOD if found.by_verdict else METHOD,
        confidence=confidence,
        n_labels=found.n_draws,
        next_position=next_position,
        n_observed=len(judge),
        n_missing=n_cases - len(judge),
        cases_left=sum(1 for case in index if case not in people),
        n_unlabelled=n_cases - len(people),
        case_width=span / n_cases,
    )


def _within(estimated: Interval, exact: Interval) -> Interval:
    """The prediction-powered interval within the range people's labels allow.

    Both hold the figure (the range always, the interval at its confidence), so their
    common part does at the interval's confidence. Should they not meet, the interval
    has missed, and the range is what is left.
    """
    lower, upper = max(estimated.lower, exact.lower), min(estimated.upper, exact.upper)
    return Interval(lower, upper) if lower <= upper else exact
