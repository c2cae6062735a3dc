"""Intervals projected to a larger run at the observed rate (for the sample-size readout)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from oloproof_core.aggregate import MetricEstimate
from oloproof_core.stats import Interval, mean_interval, proportion_interval


def projected_interval(
    metric: MetricEstimate, values: Sequence[float | None], extra: int, confidence: float
) -> Interval:
    """The metric's interval after `extra` more observed cases that repeat the sample.

    Pass/fail: the successes grow at the observed rate. Scores: the observed scores
    are repeated in order, so the mean and the spread stay those of the sample.
    Cases already missing stay missing and keep bounding the interval.
    """
    if metric.value_type == "pass_fail":
        # The counts are recovered from the estimate, so a result saved without its
        # cases still gets a readout.
        n_observed = metric.n_observed
        rate = metric.estimate or 0.0
        successes = round(rate * n_observed)
        grown = successes + round(rate * extra)
        return proportion_interval(grown, n_observed + extra, metric.n_missing, confidence)
    observed = np.asarray([value for value in values if value is not None], dtype=np.float64)
    repeated = np.resize(observed, observed.size + extra) if observed.size else observed
    low, high = metric.score_range
    return mean_interval(repeated, metric.n_missing, low, high, confidence)
