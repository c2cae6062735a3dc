"""Paired statistics for one metric of two runs, on the engine's statistics.

Pass/fail: `paired_proportion_difference` (betting interval on the per-case
differences, driven by the discordant pairs; exact McNemar p-value). Scores:
`paired_mean_difference` (betting interval for bounded differences, betting
p-value). Both bound pairs with a missing side by their worst and best
completions (see `oloproof_core.stats._paired`).

Interval and p-value come from one procedure (the same betting capital), so
they never disagree. Cases are read in the order of their ids' digests
(`keys`), so the figures are a function of the set of pairs.

Clusters (Miller, "Adding Error Bars to Evals", 2024, §3.2): when cases carry
a `cluster`, `clustered_paired_difference` bets on the cluster means of the
per-case differences instead, valid for any number of clusters; below
`FEW_CLUSTERS` the comparison carries a warning.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from oloproof_core.stats import (
    DIFFERENCE_TUNING,
    SCORE_TUNING,
    ClusterGroups,
    Interval,
    ReadOrder,
    clustered_paired_difference,
    paired_mean_difference,
    paired_proportion_difference,
)

FloatArray = npt.NDArray[np.float64]

CLUSTER_NOTE = "cluster-aware: betting on the means of {k} clusters"


@dataclass(frozen=True, slots=True)
class PairedFigures:
    interval: Interval
    p_value: float
    method: str


def _as_verdicts(values: FloatArray) -> FloatArray:
    """1.0 for a pass (a value at the top), 0.0 for a fail, NaN where missing."""
    result: FloatArray = np.where(np.isnan(values), np.nan, (values >= 1.0).astype(np.float64))
    return result


def paired_figures(
    baseline: FloatArray,
    candidate: FloatArray,
    *,
    pass_fail: bool,
    low: float,
    high: float,
    confidence: float,
    clusters: Sequence[str] | ClusterGroups | None = None,
    keys: Sequence[str] | ReadOrder | None = None,
) -> PairedFigures:
    """Interval and p-value for mean(candidate − baseline); NaN marks a missing side.

    `keys` are the cases' ids, or their `ReadOrder`; `clusters` their cluster labels, or
    the `ClusterGroups` of those labels when several metrics share the cases.
    """
    if clusters is not None:
        groups = clusters if isinstance(clusters, ClusterGroups) else ClusterGroups(clusters)
        tuning = SCORE_TUNING if pass_fail else DIFFERENCE_TUNING
        robust = clustered_paired_difference(
            np.asarray(baseline, dtype=np.float64),
            np.asarray(candidate, dtype=np.float64),
            groups,
            low,
            high,
            confidence,
            tuning=tuning,
        )
        note = CLUSTER_NOTE.format(k=groups.count)
        return PairedFigures(robust.interval, robust.p_value, f"{robust.method}; {note}")
    if pass_fail:
        iid = paired_proportion_difference(
            _as_verdicts(np.asarray(baseline, dtype=np.float64)),
            _as_verdicts(np.asarray(candidate, dtype=np.float64)),
            confidence,
            keys=keys,
        )
    else:
        iid = paired_mean_difference(
            np.asarray(baseline, dtype=np.float64),
            np.asarray(candidate, dtype=np.float64),
            low,
            high,
            confidence,
            keys=keys,
        )
    return PairedFigures(iid.interval, iid.p_value, iid.method)
