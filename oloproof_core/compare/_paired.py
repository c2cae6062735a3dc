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
    Interval,
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


def _as_verdicts(values: FloatArray) -> list[bool | None]:
    # Through Python lists (value != value is NaN): per-element numpy calls cost ~30x more.
    passed = (values >= 1.0).tolist()
    return [
        None if value != value else ok for value, ok in zip(values.tolist(), passed, strict=True)
    ]


def _as_scores(values: FloatArray) -> list[float | None]:
    return [None if value != value else value for value in values.tolist()]


def paired_figures(
    baseline: FloatArray,
    candidate: FloatArray,
    *,
    pass_fail: bool,
    low: float,
    high: float,
    confidence: float,
    clusters: Sequence[str] | None = None,
    keys: Sequence[str] | None = None,
) -> PairedFigures:
    """Interval and p-value for mean(candidate − baseline); NaN marks a missing side.

    `keys` are the cases' ids (reading order); `clusters` their cluster labels.
    """
    if clusters is not None:
        tuning = SCORE_TUNING if pass_fail else DIFFERENCE_TUNING
        robust = clustered_paired_difference(
            _as_scores(baseline),
            _as_scores(candidate),
            list(clusters),
            low,
            high,
            confidence,
            tuning=tuning,
        )
        note = CLUSTER_NOTE.format(k=len(set(clusters)))
        return PairedFigures(robust.interval, robust.p_value, f"{robust.method}; {note}")
    if pass_fail:
        iid = paired_proportion_difference(
            _as_verdicts(baseline), _as_verdicts(candidate), confidence, keys=keys
        )
    else:
        iid = paired_mean_difference(
            _as_scores(baseline), _as_scores(candidate), low, high, confidence, keys=keys
        )
    return PairedFigures(iid.interval, iid.p_value, iid.method)
