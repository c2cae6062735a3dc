"""Paired statistics for one metric of two runs, on the engine's statistics.

Pass/fail: `paired_proportion_difference` (betting interval on the per-case
differences, driven by the discordant pairs; exact McNemar p-value). Scores:
`paired_mean_difference` (betting interval for bounded differences, betting
p-value). Both bound pairs with a missing side by their worst and best
completions (see `oloproof_core.stats._paired`).

Clusters (Miller, "Adding Error Bars to Evals", 2024, §3.2): when cases carry
a `cluster`, `clustered_paired_difference` gives the cluster-robust (CR1,
Student t) interval and p-value. That interval is asymptotic in the number of
clusters, so the reported interval is the hull of it and the finite-sample
i.i.d. interval: never narrower than either, and wide when clusters are few.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from oloproof_core.stats import (
    Interval,
    clustered_paired_difference,
    paired_mean_difference,
    paired_proportion_difference,
)

FloatArray = npt.NDArray[np.float64]

CLUSTER_NOTE = (
    "cluster-aware: widened to the cluster-robust CR1 interval over {k} clusters (Miller 2024)"
)


@dataclass(frozen=True, slots=True)
class PairedFigures:
    interval: Interval
    p_value: float
    method: str


def _as_verdicts(values: FloatArray) -> list[bool | None]:
    return [None if np.isnan(value) else bool(value >= 1.0) for value in values]


def _as_scores(values: FloatArray) -> list[float | None]:
    return [None if np.isnan(value) else float(value) for value in values]


def paired_figures(
    baseline: FloatArray,
    candidate: FloatArray,
    *,
    pass_fail: bool,
    low: float,
    high: float,
    confidence: float,
    clusters: Sequence[str] | None = None,
) -> PairedFigures:
    """Interval and p-value for mean(candidate − baseline); NaN marks a missing side."""
    if pass_fail:
        iid = paired_proportion_difference(
            _as_verdicts(baseline), _as_verdicts(candidate), confidence
        )
    else:
        iid = paired_mean_difference(
            _as_scores(baseline), _as_scores(candidate), low, high, confidence
        )
    if clusters is None:
        return PairedFigures(iid.interval, iid.p_value, iid.method)
    robust = clustered_paired_difference(
        _as_scores(baseline), _as_scores(candidate), list(clusters), low, high, confidence
    )
    interval = Interval(
        min(iid.interval.lower, robust.interval.lower),
        max(iid.interval.upper, robust.interval.upper),
    )
    note = CLUSTER_NOTE.format(k=len(set(clusters)))
    return PairedFigures(interval, robust.p_value, f"{iid.method}; {note}")
