"""Cluster-robust (CR1) intervals: the asymptotic reference for clustered data.

The engine reports the finite-sample betting interval of ``_cluster_betting``;
these CR1 intervals remain for comparison (bench/README.md): they are
what the literature recommends, and what users will check against.

Cases that share a source document, a conversation or a template are not
independent, and treating them as such understates the uncertainty. Miller,
E. (2024). "Adding Error Bars to Evals: A Statistical Approach to Language
Model Evaluations", arXiv:2411.00640, §3.2, recommends clustered standard
errors. The estimator here is the CR1 sandwich variance of a mean::

    V = G / (G - 1) * sum_g (sum_{i in g} (x_i - mean))^2 / n^2

with critical values from Student's t with ``G - 1`` degrees of freedom,
the small-cluster-count practice of Cameron, A. C. and Miller, D. L.
(2015). "A Practitioner's Guide to Cluster-Robust Inference". Journal of
Human Resources 50(2), 317–372, §VI.

These intervals are asymptotic in the number of clusters: unlike the
betting intervals they carry no finite-sample guarantee, and the method
string says so. With a single cluster nothing can be said about
between-cluster variation and the whole range is returned.

Missing values are bounded as elsewhere (SPEC §1.3): the lower end is the
lower limit with every missing value at its worst, the upper end the upper
limit with every missing value at its best; each missing row stays in its
own cluster.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Sequence

import numpy as np
import numpy.typing as npt

from ._difference import PairedDifference
from ._interval import Interval
from ._pairs import Pairs, read_scores
from ._validate import check_confidence

__all__ = ["cr1_mean_interval", "cr1_paired_difference"]

FloatArray = npt.NDArray[np.float64]

_MEAN_METHOD = (
    "mean with cluster-robust (CR1) standard error, Student t with G-1 df; cluster-robust, "
    "asymptotic; missing bounded by worst/best completion"
)
_PAIRED_METHOD = (
    "paired difference (b - a) with cluster-robust (CR1) standard error, Student t with G-1 "
    "df; cluster-robust, asymptotic; missing bounded by worst/best completion"
)


def _cluster_codes(clusters: Sequence[Hashable], n: int) -> npt.NDArray[np.intp]:
    if len(clusters) != n:
        raise ValueError(f"clusters has {len(clusters)} entries for {n} rows")
    codes: dict[Hashable, int] = {}
    return np.array([codes.setdefault(key, len(codes)) for key in clusters], dtype=np.intp)


def _mean_and_se(x: FloatArray, codes: npt.NDArray[np.intp]) -> tuple[float, float, int]:
    """Mean, CR1 standard error and number of clusters."""
    mean = float(x.mean())
    sums = np.bincount(codes, weights=x - mean)
    groups = int(np.count_nonzero(np.bincount(codes)))
    if groups < 2:
        return mean, math.inf, groups
    variance = groups / (groups - 1) * float(np.sum(sums**2)) / x.size**2
    return mean, math.sqrt(variance), groups


def _limit(x: FloatArray, codes: npt.NDArray[np.intp], level: float, side: float) -> float:
    """One end (``side`` -1 lower, +1 upper) of the clustered interval for the mean of ``x``."""
    from scipy.stats import t as student_t  # scipy.stats only when this method runs

    mean, se, groups = _mean_and_se(x, codes)
    if not math.isfinite(se):
        return -math.inf if side < 0 else math.inf
    quantile = float(student_t.ppf(0.5 + level / 2.0, groups - 1))
    return mean + side * quantile * se


def _p_value(worst: FloatArray, best: FloatArray, codes: npt.NDArray[np.intp]) -> float:
    """Two-sided t p-value for zero mean, consistent with the bounded interval.

    Zero is outside ``[lower(worst), upper(best)]`` at level ``alpha`` exactly
    when ``t(worst) >= q`` or ``t(best) <= -q``, so the p-value is twice the
    smaller of those two one-sided tail probabilities.
    """
    from scipy.stats import t as student_t  # scipy.stats only when this method runs

    def statistic(x: FloatArray) -> tuple[float, int]:
        mean, se, groups = _mean_and_se(x, codes)
        if not math.isfinite(se):
            return 0.0, groups
        if se == 0.0:
            return (0.0 if mean == 0.0 else math.copysign(math.inf, mean)), groups
        return mean / se, groups

    t_worst, groups = statistic(worst)
    t_best, _ = statistic(best)
    if groups < 2:
        return 1.0
    tail = min(float(student_t.sf(t_worst, groups - 1)), float(student_t.cdf(t_best, groups - 1)))
    return min(1.0, 2.0 * tail)


def cr1_mean_interval(
    values: Sequence[float | bool | None],
    clusters: Sequence[Hashable],
    low: float = 0.0,
    high: float = 1.0,
    confidence: float = 0.95,
) -> Interval:
    """Cluster-robust interval for a mean in ``[low, high]``; ``None`` marks a missing value.

    ``clusters[i]`` is the cluster key of row ``i``. Pass/fail verdicts may be
    given as bools with the default range ``[0, 1]``. The result is clipped
    to ``[low, high]``; fewer than two clusters give the whole range.
    """
    level = check_confidence(confidence)
    raw = [None if v is None else float(v) for v in values]
    pairs = read_scores(raw, raw, low, high)
    codes = _cluster_codes(clusters, pairs.a.size)
    if pairs.a.size == 0:
        return Interval(pairs.low, pairs.high)
    missing = pairs.a_missing
    worst = np.where(missing, pairs.low, pairs.a)
    best = np.where(missing, pairs.high, pairs.a)
    lower = max(pairs.low, _limit(worst, codes, level, -1.0))
    upper = min(pairs.high, _limit(best, codes, level, 1.0))
    return Interval(lower, upper)


def _complete_pair_means(pairs: Pairs) -> tuple[float | None, float | None, float | None]:
    """Both means and their difference over the complete pairs (None when there are none)."""
    complete = pairs.complete
    if not complete.any():
        return None, None, None
    return (
        float(pairs.a[complete].mean()),
        float(pairs.b[complete].mean()),
        float((pairs.b[complete] - pairs.a[complete]).mean()),
    )


def cr1_paired_difference(
    a: Sequence[float | bool | None],
    b: Sequence[float | bool | None],
    clusters: Sequence[Hashable],
    low: float = 0.0,
    high: float = 1.0,
    confidence: float = 0.95,
) -> PairedDifference:
    """Cluster-robust paired difference ``mean_b - mean_a`` over the same cases.

    ``a`` is the baseline, ``b`` the candidate, aligned by index with
    ``clusters``; ``None`` marks a missing entry. Bools are read as
    pass/fail scores 0 and 1. The interval is clipped to
    ``[-(high - low), high - low]``; the p-value is the matching two-sided
    cluster-robust t test of zero difference.
    """
    level = check_confidence(confidence)
    pairs = read_scores(
        [None if v is None else float(v) for v in a],
        [None if v is None else float(v) for v in b],
        low,
        high,
    )
    codes = _cluster_codes(clusters, pairs.a.size)
    complete = pairs.complete
    span = pairs.span
    estimate_a, estimate_b, difference = _complete_pair_means(pairs)
    if pairs.a.size == 0:
        interval, p_value = Interval(-span, span), 1.0
    else:
        worst = pairs.differences(best=False)
        best = pairs.differences(best=True)
        interval = Interval(
            max(-span, _limit(worst, codes, level, -1.0)),
            min(span, _limit(best, codes, level, 1.0)),
        )
        p_value = _p_value(worst, best, codes)
    return PairedDifference(
        estimate_a=estimate_a,
        estimate_b=estimate_b,
        difference=difference,
        interval=interval,
        p_value=p_value,
        n_pairs=int(complete.sum()),
        n_missing=int((~complete).sum()),
        method=_PAIRED_METHOD,
        confidence=level,
    )
