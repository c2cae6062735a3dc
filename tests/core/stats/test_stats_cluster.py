import math

import numpy as np
import pytest
from scipy.stats import t as student_t
from scipy.stats import ttest_1samp, ttest_rel

from oloproof_core.stats import (
    clustered_mean_interval,
    clustered_paired_difference,
    cr1_mean_interval,
    cr1_paired_difference,
)


def loop_cr1_interval(values, clusters, confidence=0.95):
    """CR1 cluster-robust interval written out cluster by cluster (Cameron & Miller 2015)."""
    n = len(values)
    mean = sum(values) / n
    totals = {}
    for value, key in zip(values, clusters, strict=True):
        totals[key] = totals.get(key, 0.0) + (value - mean)
    groups = len(totals)
    variance = groups / (groups - 1) * sum(s * s for s in totals.values()) / n**2
    q = student_t.ppf(0.5 + confidence / 2, groups - 1)
    return mean - q * math.sqrt(variance), mean + q * math.sqrt(variance)


def test_singleton_clusters_reduce_to_the_t_interval():
    # With one row per cluster, CR1 is the ordinary standard error and the
    # interval is the one-sample t interval.
    x = np.random.default_rng(0).random(25)
    reference = ttest_1samp(x, 0.0).confidence_interval(0.95)
    interval = cr1_mean_interval(list(x), list(range(25)))
    assert interval.lower == pytest.approx(reference.low, rel=1e-12)
    assert interval.upper == pytest.approx(reference.high, rel=1e-12)


def test_matches_loop_reference_with_real_clusters():
    rng = np.random.default_rng(1)
    clusters = [f"doc{i // 4}" for i in range(48)]
    x = np.clip(0.5 + np.repeat(rng.normal(0, 0.2, 12), 4) + rng.normal(0, 0.1, 48), 0, 1)
    low, high = loop_cr1_interval(list(x), clusters, 0.9)
    interval = cr1_mean_interval(list(x), clusters, confidence=0.9)
    assert interval.lower == pytest.approx(low, rel=1e-12)
    assert interval.upper == pytest.approx(high, rel=1e-12)


def test_correlated_clusters_widen_the_interval():
    # Fixed seed: deterministic (0 of 2000 fresh seeds would have failed).
    rng = np.random.default_rng(2)
    effects = np.repeat(rng.normal(0, 0.2, 10), 10)
    x = np.clip(0.5 + effects + rng.normal(0, 0.05, 100), 0, 1)
    clustered = clustered_mean_interval(list(x), [i // 10 for i in range(100)])
    independent = clustered_mean_interval(list(x), list(range(100)))
    assert clustered.width > 2 * independent.width


def test_single_cluster_or_no_rows_gives_whole_range():
    assert cr1_mean_interval([0.2, 0.4], ["a", "a"]).lower == 0.0
    assert cr1_mean_interval([0.2, 0.4], ["a", "a"]).upper == 1.0
    # One cluster mean is one observation: betting can hardly exclude anything.
    assert clustered_mean_interval([0.2, 0.4], ["a", "a"]).width > 0.9
    assert clustered_mean_interval([], [], low=1.0, high=5.0).width == 4.0


def test_missing_values_bounded_by_extremes():
    x = [0.5, 0.6, 0.4, 0.7, 0.5, 0.6]
    keys = ["a", "a", "b", "b", "c", "c"]
    full = clustered_mean_interval(x, keys)
    gappy = clustered_mean_interval([None, *x[1:]], keys)
    assert gappy.lower == clustered_mean_interval([0.0, *x[1:]], keys).lower
    assert gappy.upper == clustered_mean_interval([1.0, *x[1:]], keys).upper
    assert gappy.lower <= full.lower
    assert gappy.upper >= full.upper


def test_rejects_misaligned_clusters_and_out_of_range():
    with pytest.raises(ValueError, match="clusters"):
        clustered_mean_interval([0.1, 0.2], ["a"])
    with pytest.raises(ValueError, match=r"1\.5"):
        clustered_mean_interval([0.1, 1.5], ["a", "b"])


def test_paired_singleton_clusters_reduce_to_paired_t_test():
    rng = np.random.default_rng(3)
    a = rng.random(30)
    b = np.clip(a + rng.normal(0.05, 0.1, 30), 0, 1)
    reference = ttest_rel(b, a)
    ci = reference.confidence_interval(0.95)
    result = cr1_paired_difference(list(a), list(b), list(range(30)))
    assert result.interval.lower == pytest.approx(ci.low, rel=1e-10)
    assert result.interval.upper == pytest.approx(ci.high, rel=1e-10)
    assert result.p_value == pytest.approx(reference.pvalue, rel=1e-10)
    assert "cluster-robust, asymptotic" in result.method


def test_paired_verdicts_and_missing():
    a = [True, True, False, True, None, True, False, True]
    b = [True, False, False, True, True, None, True, False]
    keys = ["x", "x", "y", "y", "z", "z", "w", "w"]
    result = clustered_paired_difference(a, b, keys)
    assert result.n_pairs == 6
    assert result.n_missing == 2
    assert result.difference == pytest.approx(-1 / 6)
    assert -1.0 <= result.interval.lower <= result.interval.upper <= 1.0
    assert result.interval.contains(result.difference)


def test_paired_clear_regression_is_flagged():
    # Fixed seed: deterministic. With a fresh seed the interval excluded 0 in all of 4000
    # trials, but p < 0.01 failed in 1.4 % of them: the pinned seed keeps the example.
    rng = np.random.default_rng(4)
    a = rng.random(200) < 0.9
    b = a & (rng.random(200) > 0.3)
    result = clustered_paired_difference(list(a), list(b), [i // 5 for i in range(200)])
    assert result.interval.upper < 0
    assert result.p_value < 0.01
