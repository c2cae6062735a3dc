"""Finite-sample valid intervals for clustered data: betting on cluster means.

Cases that share a source document, a conversation or a template are not
independent (Miller, E. (2024). "Adding Error Bars to Evals", arXiv:2411.00640,
§3.2). The cluster-robust (CR1, Student t) interval Miller recommends is
asymptotic in the number of clusters and under-covers when they are few
(bench/README.md: 0.89 at 5 clusters of 20 with an intra-cluster correlation of
0.5). Here the clusters themselves are the independent units: each cluster's
mean lies in the score range, and the Waudby-Smith–Ramdas betting interval
(``_bounded_mean``) is run on the cluster means. That is valid for every number
of clusters, 2 included, and for any dependence inside a cluster.

Unequal sizes: the bet on cluster ``g`` is scaled by ``w_g = n_g / mean(n)``
(still truncated to keep every factor positive), so large clusters weigh as
much as their cases do. With the sizes taken as given (a fixed design), any such
predictable scaling keeps the guarantee, for the mean that all clusters share;
when sizes are equal this is exactly the mean over cases. If the mean of a
cluster depends on its size, the cluster-level and case-level means differ and
the interval targets the former, weighted towards large clusters.

Order: clusters are read in the order of the digests of their labels
(``_order``), so the interval is a function of the set of cases.

Missing values are bounded as elsewhere (SPEC §1.3): the lower end with every
missing value at its worst, the upper end with every missing value at its best.

Few clusters: below ``FEW_CLUSTERS`` the interval is still valid but wide, and
the engine attaches a warning saying how many clusters there are.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Sequence

import numpy as np
import numpy.typing as npt

from ._bounded_mean import (
    SCORE_TUNING,
    BetTuning,
    Sample,
    plug_in_bets,
)
from ._difference import PairedDifference
from ._interval import Interval
from ._order import key_order
from ._pairs import Pairs, pairs_from_arrays, read_scores
from ._validate import check_confidence

__all__ = [
    "FEW_CLUSTERS",
    "ClusterGroups",
    "clustered_mean_interval",
    "clustered_paired_difference",
    "few_clusters_warning",
]

FloatArray = npt.NDArray[np.float64]

FEW_CLUSTERS = 10
"""Below this many clusters a clustered figure carries a warning (it is valid, but wide)."""

_MEAN_METHOD = (
    "betting interval on cluster means (Waudby-Smith & Ramdas 2024), finite-sample valid "
    "for any number of clusters; missing bounded by worst/best completion"
)
_PAIRED_METHOD = (
    "paired difference (b - a): betting interval and test on cluster means of the per-case "
    "differences, finite-sample valid for any number of clusters; missing bounded by "
    "worst/best completion"
)


def few_clusters_warning(n_clusters: int | None) -> str | None:
    """The warning a clustered figure carries when its clusters are few, else None."""
    if n_clusters is None or n_clusters >= FEW_CLUSTERS:
        return None
    return (
        f"only {n_clusters} clusters: the interval is valid but wide, since clusters, "
        f"not cases, are the independent units (fewer than {FEW_CLUSTERS})"
    )


class ClusterGroups:
    """Which cluster each row belongs to, clusters numbered in reading order.

    Built once per set of rows and shared by every metric measured on them: coding
    100,000 labels is the costliest step of a clustered figure.
    """

    def __init__(self, clusters: Sequence[Hashable]) -> None:
        labels: dict[Hashable, int] = {}
        codes = np.array([labels.setdefault(key, len(labels)) for key in clusters], np.intp)
        self._set(codes, list(labels))

    @classmethod
    def from_codes(cls, codes: npt.ArrayLike, labels: Sequence[Hashable]) -> ClusterGroups:
        """Rows already coded: row ``i`` is in cluster ``labels[codes[i]]`` (labels distinct)."""
        groups = cls.__new__(cls)
        groups._set(np.asarray(codes, dtype=np.intp), list(labels))
        return groups

    def _set(self, codes: npt.NDArray[np.intp], labels: list[Hashable]) -> None:
        order = key_order(labels)
        rank = np.empty(len(labels), np.intp)
        rank[order] = np.arange(len(labels))
        self.codes = rank[codes] if codes.size else codes
        self.sizes = np.bincount(self.codes, minlength=len(labels)).astype(np.float64)
        if np.any(self.sizes == 0):
            raise ValueError("every cluster label must be used by at least one row")
        self.weights = self.sizes / self.sizes.mean() if len(labels) else self.sizes

    @property
    def rows(self) -> int:
        return int(self.codes.size)

    @property
    def count(self) -> int:
        return int(self.sizes.size)

    def means(self, unit: FloatArray) -> FloatArray:
        # Summed in sorted order within each cluster, so that the same cases in
        # another order give the same bits.
        order = np.lexsort((unit, self.codes))
        starts = np.searchsorted(self.codes[order], np.arange(self.count))
        sums = np.add.reduceat(unit[order], starts) if unit.size else np.zeros(0)
        result: FloatArray = np.clip(sums / self.sizes, 0.0, 1.0)
        return result

    def bets(self, means: FloatArray, alpha: float, tuning: BetTuning) -> FloatArray:
        result: FloatArray = plug_in_bets(means[None, :], alpha, self.count, tuning)[0]
        return result * self.weights


def cluster_groups(clusters: Sequence[Hashable] | ClusterGroups, n: int) -> ClusterGroups:
    """``clusters`` as groups of ``n`` rows (labels are coded, groups checked)."""
    groups = clusters if isinstance(clusters, ClusterGroups) else ClusterGroups(clusters)
    if groups.rows != n:
        raise ValueError(f"clusters has {groups.rows} entries for {n} rows")
    return groups


def _cluster_sample(
    groups: ClusterGroups, unit: FloatArray, alpha: float, tuning: BetTuning
) -> Sample:
    """One completion read as its cluster means, bet on with the clusters' size weights.

    The search for an end starts at the mean over cases, not over clusters.
    """
    means = groups.means(unit)
    centre = min(1.0, max(0.0, math.fsum(unit.tolist()) / unit.size))
    bets = groups.bets(means, alpha, tuning)
    return Sample(means[None, :], bets[None, :], tuning.truncation, centre)


def _completions(
    groups: ClusterGroups, worst: FloatArray, best: FloatArray, alpha: float, tuning: BetTuning
) -> tuple[Sample, Sample]:
    low = _cluster_sample(groups, worst, alpha, tuning)
    # Without missing values the two completions are one.
    high = low if np.array_equal(worst, best) else _cluster_sample(groups, best, alpha, tuning)
    return low, high


def _unit_interval(worst: Sample, best: Sample, alpha: float) -> tuple[float, float]:
    """Betting interval on [0, 1] from the worst- and best-filled completions."""
    threshold = math.log(2.0 / alpha)
    return worst.end(1.0, threshold), best.end(-1.0, threshold)


def _unit_p_value(worst: Sample, best: Sample) -> float:
    """Two-sided betting p-value for a unit mean of 1/2 (zero difference)."""
    capitals = (worst.log_capital(0.5, 1.0), best.log_capital(0.5, -1.0))
    return min(1.0, math.exp(math.log(2.0) - max(capitals)))


def clustered_mean_interval(
    values: Sequence[float | bool | None],
    clusters: Sequence[Hashable],
    low: float = 0.0,
    high: float = 1.0,
    confidence: float = 0.95,
) -> Interval:
    """Finite-sample valid interval for a mean in ``[low, high]`` over clustered cases.

    ``clusters[i]`` is the cluster label of row ``i``; ``None`` in ``values``
    marks a missing value. Pass/fail verdicts may be given as bools with the
    default range ``[0, 1]``. See the module docstring for the method.
    """
    level = check_confidence(confidence)
    raw = [None if v is None else float(v) for v in values]
    pairs = read_scores(raw, raw, low, high)
    if pairs.a.size == 0:
        return Interval(pairs.low, pairs.high)
    groups = cluster_groups(clusters, pairs.a.size)
    unit = (pairs.a - pairs.low) / pairs.span
    worst = np.where(pairs.a_missing, 0.0, unit)
    best = np.where(pairs.a_missing, 1.0, unit)
    alpha = 1.0 - level
    low_fill, high_fill = _completions(groups, worst, best, alpha, SCORE_TUNING)
    lower, upper = _unit_interval(low_fill, high_fill, alpha)
    return Interval(pairs.low + lower * pairs.span, pairs.low + upper * pairs.span)


def _read_pairs(
    a: Sequence[float | bool | None] | FloatArray,
    b: Sequence[float | bool | None] | FloatArray,
    low: float,
    high: float,
) -> Pairs:
    if isinstance(a, np.ndarray) and isinstance(b, np.ndarray):
        return pairs_from_arrays(a, b, low, high)
    return read_scores(
        [None if v is None else float(v) for v in a],
        [None if v is None else float(v) for v in b],
        low,
        high,
    )


def clustered_paired_difference(
    a: Sequence[float | bool | None] | FloatArray,
    b: Sequence[float | bool | None] | FloatArray,
    clusters: Sequence[Hashable] | ClusterGroups,
    low: float = 0.0,
    high: float = 1.0,
    confidence: float = 0.95,
    *,
    tuning: BetTuning = SCORE_TUNING,
) -> PairedDifference:
    """Paired difference ``mean_b - mean_a`` over clustered cases, betting on cluster means.

    ``a`` is the baseline, ``b`` the candidate, aligned by index with
    ``clusters``; ``None`` marks a missing entry, bools are pass/fail scores.
    Float arrays may be given instead, NaN marking a missing entry, and
    ``ClusterGroups`` instead of labels when several metrics share the rows.
    Interval and p-value come from the same capital and never disagree.
    """
    level = check_confidence(confidence)
    pairs = _read_pairs(a, b, low, high)
    span = pairs.span
    complete = pairs.complete
    if pairs.a.size == 0:
        interval, p_value = Interval(-span, span), 1.0
    else:
        groups = cluster_groups(clusters, pairs.a.size)
        alpha = 1.0 - level
        worst, best = _completions(
            groups,
            pairs.unit_differences(best=False),
            pairs.unit_differences(best=True),
            alpha,
            tuning,
        )
        lower, upper = _unit_interval(worst, best, alpha)
        interval = Interval(span * (2.0 * lower - 1.0), span * (2.0 * upper - 1.0))
        p_value = _unit_p_value(worst, best)
    both = complete.any()
    return PairedDifference(
        estimate_a=float(pairs.a[complete].mean()) if both else None,
        estimate_b=float(pairs.b[complete].mean()) if both else None,
        difference=float((pairs.b[complete] - pairs.a[complete]).mean()) if both else None,
        interval=interval,
        p_value=p_value,
        n_pairs=int(complete.sum()),
        n_missing=int((~complete).sum()),
        method=_PAIRED_METHOD,
        confidence=level,
    )
