"""Paired intervals and tests for the difference between two runs on the same cases.

Per case the difference is `d_i = candidate_i − baseline_i`, bounded in
`[−w, w]` with `w` the width of the metric's range (for pass/fail, d_i is −1, 0
or +1: a regressed, unchanged or improved case).

Interval: the betting interval for a bounded mean (Waudby-Smith & Ramdas 2024,
`oloproof_core.stats.bounded_mean_interval`) applied to the differences mapped
onto `[0, 1]`. It is valid at every sample size for any distribution of the
differences. Pairing is what makes it narrow: unchanged cases contribute
d_i = 0, so the bets adapt to the small variance of the differences and the
width is driven by the discordant pairs — for pass/fail the variance of d_i is
`(b + c)/n − ((c − b)/n)²` with `b` regressed and `c` improved cases — instead
of by the variance of each run's rate (Miller, "Adding Error Bars to Evals",
2024, §4: paired analysis).

Missing: a pair with either side missing (the system or evaluator failed, or
the case is absent from one run) is bounded, not dropped: the lower end is the
bound with every missing side at its worst (candidate at the range's minimum,
baseline at its maximum), the upper end with every missing side at its best
(Horowitz & Manski 2000, as in `oloproof_core.stats._missing`).

Clusters: when cases carry a `cluster`, the i.i.d. assumption behind the
betting interval is doubtful; the interval is widened to also contain the
cluster-robust normal interval `d̄ ± z · SE_cluster` with
`SE_cluster² = K/(K−1) · Σ_k (Σ_{i∈k} (d_i − d̄))² / n²` over `K` clusters
(Miller 2024, §3, eq. 6 — the Liang–Zeger sandwich estimator for a mean).

p-values: pass/fail, the exact McNemar test — a two-sided binomial test of the
improved cases among the discordant pairs with p = 1/2 (McNemar 1947; exact
form as in Agresti, *Categorical Data Analysis*, §11.1); scores, the paired
t-test; clustered data, the cluster-robust z-test. They use the pairs observed
on both sides only, and are reported next to — not instead of — the interval.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import numpy.typing as npt
from scipy import stats as scipy_stats

from oloproof_core.stats import Interval, bounded_mean_interval

FloatArray = npt.NDArray[np.float64]

BETTING_PAIRED = "paired betting interval on per-case differences (Waudby-Smith & Ramdas 2024)"
CLUSTER_NOTE = "cluster-aware: widened to the cluster-robust interval (Miller 2024)"
MCNEMAR = "exact McNemar test"
PAIRED_T = "paired t-test"
CLUSTER_Z = "cluster-robust z-test"


def completed(
    baseline: FloatArray, candidate: FloatArray, low: float, high: float, *, worst: bool
) -> FloatArray:
    """Differences with every missing side (NaN) at its worst or best value."""
    if worst:
        base = np.where(np.isnan(baseline), high, baseline)
        cand = np.where(np.isnan(candidate), low, candidate)
    else:
        base = np.where(np.isnan(baseline), low, baseline)
        cand = np.where(np.isnan(candidate), high, candidate)
    result: FloatArray = cand - base
    return result


def paired_difference_interval(
    baseline: FloatArray,
    candidate: FloatArray,
    low: float,
    high: float,
    confidence: float,
    clusters: Sequence[str] | None = None,
) -> Interval:
    """Interval for the mean of `candidate − baseline` (NaN marks a missing side)."""
    width = high - low
    if baseline.size == 0:
        return Interval(-width, width)
    worst = completed(baseline, candidate, low, high, worst=True)
    best = completed(baseline, candidate, low, high, worst=False)
    lower = _interval(worst, width, confidence, clusters).lower
    upper = _interval(best, width, confidence, clusters).upper
    return Interval(min(lower, upper), max(lower, upper))


def _interval(
    differences: FloatArray, width: float, confidence: float, clusters: Sequence[str] | None
) -> Interval:
    unit = np.clip((differences + width) / (2.0 * width), 0.0, 1.0)
    betting = bounded_mean_interval(unit, confidence)
    lower = -width + 2.0 * width * betting.lower
    upper = -width + 2.0 * width * betting.upper
    if clusters is not None:
        robust = cluster_robust_interval(differences, clusters, confidence)
        lower, upper = min(lower, robust.lower), max(upper, robust.upper)
    return Interval(max(-width, lower), min(width, upper))


def cluster_robust_se(differences: FloatArray, clusters: Sequence[str]) -> tuple[float, int]:
    """Cluster-robust standard error of the mean of `differences`, and the cluster count."""
    n = differences.size
    labels, index = np.unique(np.asarray(clusters, dtype=object), return_inverse=True)
    k = labels.size
    residual_sums = np.bincount(index, weights=differences - differences.mean(), minlength=k)
    if k < 2:
        return math.inf, k
    variance = k / (k - 1) * float(np.sum(residual_sums**2)) / n**2
    return math.sqrt(variance), k


def cluster_robust_interval(
    differences: FloatArray, clusters: Sequence[str], confidence: float
) -> Interval:
    se, _ = cluster_robust_se(differences, clusters)
    z = float(scipy_stats.norm.ppf(0.5 + confidence / 2.0))
    mean = float(differences.mean())
    if not math.isfinite(se):
        return Interval(-math.inf, math.inf)
    return Interval(mean - z * se, mean + z * se)


def mcnemar_exact_p(regressed: int, improved: int) -> float:
    """Two-sided exact McNemar p-value from the discordant pair counts."""
    discordant = regressed + improved
    if discordant == 0:
        return 1.0
    return float(scipy_stats.binomtest(improved, discordant, 0.5).pvalue)


def paired_p_value(
    baseline: FloatArray, candidate: FloatArray, pass_fail: bool, clusters: Sequence[str] | None
) -> tuple[float | None, str]:
    """p-value for "no difference", over the pairs observed on both sides."""
    both = ~(np.isnan(baseline) | np.isnan(candidate))
    base, cand = baseline[both], candidate[both]
    differences = cand - base
    if clusters is not None:
        kept = [label for label, keep in zip(clusters, both, strict=True) if keep]
        if differences.size == 0:
            return None, CLUSTER_Z
        se, _ = cluster_robust_se(differences, kept)
        mean = float(differences.mean())
        if se == 0.0 or not math.isfinite(se):
            return (1.0 if mean == 0.0 else None), CLUSTER_Z
        return float(2.0 * scipy_stats.norm.sf(abs(mean) / se)), CLUSTER_Z
    if pass_fail:
        regressed = int(np.count_nonzero(differences < 0))
        improved = int(np.count_nonzero(differences > 0))
        return mcnemar_exact_p(regressed, improved), MCNEMAR
    if differences.size < 2:
        return None, PAIRED_T
    if np.all(differences == differences[0]):
        # Identical differences leave the t statistic undefined unless they are all zero.
        return (1.0 if differences[0] == 0.0 else None), PAIRED_T
    return float(scipy_stats.ttest_rel(cand, base).pvalue), PAIRED_T
