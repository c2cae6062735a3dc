"""Intervals of a run imagined k times as large (the projection readout) and power figures."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING

from oloproof_core import stats
from oloproof_core.evaluation.aggregate import estimate_metric
from oloproof_core.results.estimate import MetricEstimate

if TYPE_CHECKING:
    from oloproof_core.stats import Interval


def repeated_interval(
    metric: MetricEstimate,
    values: Sequence[float | None],
    ids: Sequence[str],
    clusters: Sequence[str] | None,
    copies: int,
    confidence: float,
) -> Interval:
    """The metric's interval over every case repeated `copies` times (as new cases)."""
    tiled_ids = [f"{case_id}#{r}" for r in range(copies) for case_id in ids]
    tiled_clusters = (
        None if clusters is None else [f"{c}#{r}" for r in range(copies) for c in clusters]
    )
    return estimate_metric(
        metric.metric,
        metric.criterion,
        list(values) * copies,
        metric.value_type,
        metric.score_range,
        confidence,
        tiled_clusters,
        keys=tiled_ids,
    ).interval


def power_cases(
    metric: MetricEstimate,
    values: Sequence[float | None],
    threshold: float,
    side: str,
    effect_share: float,
    confidence: float,
) -> tuple[int | None, float]:
    """Total cases for 80 % power, and the effect it is computed at (see `_more_cases`)."""
    low, high = metric.score_range
    estimate = metric.estimate
    distance = 0.0 if estimate is None else abs(estimate - threshold)
    effect = distance if distance > 0 else effect_share * (high - low)
    direction = 1.0 if side == "min" else -1.0
    truth = min(high, max(low, threshold + direction * effect))
    if metric.value_type == "pass_fail":
        unit_truth = (truth - low) / (high - low)
        unit_threshold = (threshold - low) / (high - low)
        return stats.proportion_cases_for_power(unit_truth, unit_threshold, confidence), effect
    observed = [v for v in values if v is not None]
    if len(observed) > 1:
        mean = math.fsum(observed) / len(observed)
        sd = math.sqrt(math.fsum((v - mean) ** 2 for v in observed) / (len(observed) - 1))
    else:
        sd = math.sqrt(max(0.0, (truth - low) * (high - truth)))
    return stats.betting_cases_for_power(sd, effect, confidence), effect
