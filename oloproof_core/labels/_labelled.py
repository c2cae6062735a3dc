"""A judge-scored metric's figure once people have labelled some of the queue's draws.

The queue's draws are used in order, up to the first whose case has no label for
this run's output: the draws used are then exactly the first ``k`` of a random
sequence fixed before anyone labelled, whatever order people worked in. A draw
that landed on a missing case is passed over; the rest stay i.i.d. (see
``oloproof_core.stats._prediction_powered``, which computes the interval).
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

METHOD = "prediction-powered: judge verdicts + labelled random draws (betting, finite-sample)"


def tuning_for(value_type: str) -> BetTuning:
    """The bets on the judge's corrections, chosen by the metric's kind before any label.

    A score judge's corrections are small and spread evenly about zero, which the bolder
    tuning for differences bets on best (a fifth narrower at 50 to 200 labels); a
    pass/fail judge's are mostly zero with a few of -1 or +1, where the scores' tuning
    loses less (bench/README.md, "Labels and the judge").
    """
    return SCORE_TUNING if value_type == "pass_fail" else DIFFERENCE_TUNING


@dataclass(frozen=True, slots=True)
class LabelledEstimate:
    """A figure from judge verdicts and people's labels, in the metric's own units.

    For a comparison (`labelled_difference`) the figure is candidate minus baseline.
    `judge_bias` covers the mean of (people's value - judge's value) over the
    observed cases. `next_position` is the first draw still waiting for a label.
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

    def labels_needed(self, width: float) -> int | None:
        """About how many more labelled draws bring the interval to `width`.

        The labels' share of the width shrinks as one over the square root of their
        number; the rest (the cases' own sampling, the missing cases) does not move.
        None when labels alone cannot reach `width`, or when none is labelled yet.
        """
        if self.n_labels == 0 or not math.isfinite(width) or width <= 0:
            return None
        share = self.judge_bias.width
        fixed = max(0.0, self.interval.width - share)
        if self.interval.width <= width:
            return 0
        if width <= fixed or share <= 0:
            return None
        total = self.n_labels * (share / (width - fixed)) ** 2
        return max(0, math.ceil(total) - self.n_labels)

    def to_dict(self) -> dict[str, Any]:
        return {
            "estimate": self.estimate,
            "interval": {"lower": self.interval.lower, "upper": self.interval.upper},
            "judge_bias": {"lower": self.judge_bias.lower, "upper": self.judge_bias.upper},
            "method": self.method,
            "confidence": self.confidence,
            "n_labels": self.n_labels,
            "next_position": self.next_position,
            "n_observed": self.n_observed,
            "n_missing": self.n_missing,
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
    """The combined figure of one run's metric; None until the queue's first draw is labelled."""
    low, high = score_range
    span = high - low
    units = {
        case: (value - low) / span
        for case, value in zip(case_ids, judge_values, strict=True)
        if value is not None
    }
    used, next_position = _used_draws(draws, units, (truth,))
    if not used:
        return None
    observed = list(units)
    return _conclude(
        judge=[units[case] for case in observed],
        probabilities=[probabilities[case] for case in observed],
        index={case: i for i, case in enumerate(observed)},
        used=used,
        truth_units=[(truth[draw.case_id] - low) / span for draw in used],
        n_missing=len(case_ids) - len(observed),
        confidence=confidence,
        scale=(low, span),
        next_position=next_position,
        tuning=tuning_for(value_type),
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
    used, next_position = _used_draws(draws, units, (baseline_truth, candidate_truth))
    if not used:
        return None
    observed = list(units)
    truth_units = [
        ((candidate_truth[d.case_id] - baseline_truth[d.case_id]) / span + 1.0) / 2.0 for d in used
    ]
    return _conclude(
        judge=[units[case] for case in observed],
        probabilities=[probabilities[case] for case in observed],
        index={case: i for i, case in enumerate(observed)},
        used=used,
        truth_units=truth_units,
        n_missing=len(case_ids) - len(observed),
        confidence=confidence,
        scale=(-span, 2.0 * span),
        next_position=next_position,
        tuning=tuning_for(value_type),
    )


def _used_draws(
    draws: Sequence[Draw], observed: Mapping[str, float], truths: Sequence[Mapping[str, float]]
) -> tuple[list[Draw], int | None]:
    """The draws in order up to the first unlabelled one, passing over missing cases."""
    used: list[Draw] = []
    for draw in sorted(draws, key=lambda d: d.position):
        if draw.case_id not in observed:
            continue
        if not all(draw.case_id in truth for truth in truths):
            return used, draw.position
        used.append(draw)
    return used, None


def _conclude(
    *,
    judge: list[float],
    probabilities: list[float],
    index: Mapping[str, int],
    used: list[Draw],
    truth_units: list[float],
    n_missing: int,
    confidence: float,
    scale: tuple[float, float],
    next_position: int | None,
    tuning: BetTuning,
) -> LabelledEstimate:
    offset, span = scale
    found = prediction_powered_interval(
        [min(1.0, max(0.0, value)) for value in judge],
        probabilities,
        [index[draw.case_id] for draw in used],
        [min(1.0, max(0.0, value)) for value in truth_units],
        n_missing,
        confidence,
        tuning=tuning,
    )
    return LabelledEstimate(
        estimate=offset + found.estimate * span,
        interval=Interval(
            offset + found.interval.lower * span, offset + found.interval.upper * span
        ),
        judge_bias=Interval(found.rectifier.lower * span, found.rectifier.upper * span),
        method=METHOD,
        confidence=confidence,
        n_labels=found.n_draws,
        next_position=next_position,
        n_observed=len(judge),
        n_missing=n_missing,
    )
