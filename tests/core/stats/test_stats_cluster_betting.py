"""Clustered intervals that stay valid with few clusters (betting on cluster means)."""

import numpy as np
import pytest
from scipy.stats import binom

from oloproof_core.stats import (
    FEW_CLUSTERS,
    bounded_mean_bounds,
    bounded_mean_interval,
    clustered_mean_interval,
    clustered_paired_difference,
    few_clusters_warning,
)
from oloproof_core.stats._order import key_order

# Fixed seed: deterministic. With a fresh seed, an interval covering exactly its nominal
# 95 % covers fewer than COVERED (1204) of REPS samples with probability 8e-5 (binomial
# tail); the cluster-robust t interval's 0.886 would reach COVERED with probability 1e-6.
REPS = 1300
COVERED = int(binom.ppf(1e-4, REPS, 0.95))


@pytest.mark.parametrize("kind", ["pass_fail", "score"])
def test_coverage_at_five_clusters_with_strong_correlation(kind):
    # 5 clusters of 20 cases, intra-cluster correlation 0.5: the setting where the
    # cluster-robust t interval covered 0.886. With equal clusters the interval is the
    # betting interval on the cluster means read in their labels' order, so all samples
    # are bounded at once on their means; the public function gives the same interval.
    rng = np.random.default_rng(5)
    labels = [g for g in range(5) for _ in range(20)]
    if kind == "pass_fail":
        rates = np.repeat(rng.beta(0.5, 0.5, (REPS, 5)), 20, axis=1)
        values = (rng.random((REPS, 100)) < rates).astype(float)
    else:
        effects = np.repeat(rng.normal(0.0, 0.15, (REPS, 5)), 20, axis=1)
        values = np.clip(0.5 + effects + rng.normal(0.0, 0.15, (REPS, 100)), 0.0, 1.0)
    bounds = bounded_mean_bounds(values.reshape(REPS, 5, 20).mean(axis=2), keys=list(range(5)))
    for row in range(20):
        interval = clustered_mean_interval(list(values[row]), labels)
        assert interval.lower == pytest.approx(bounds[row, 0], abs=1e-9)
        assert interval.upper == pytest.approx(bounds[row, 1], abs=1e-9)
    assert int(np.sum((bounds[:, 0] <= 0.5) & (bounds[:, 1] >= 0.5))) >= COVERED


def test_equal_clusters_of_one_case_match_the_betting_interval_on_cases():
    x = np.random.default_rng(1).beta(2, 3, 40)
    ids = [f"c{i}" for i in range(40)]
    clustered = clustered_mean_interval(list(x), ids)
    plain = bounded_mean_interval(x, keys=ids)
    assert clustered.lower == pytest.approx(plain.lower, abs=1e-9)
    assert clustered.upper == pytest.approx(plain.upper, abs=1e-9)


def test_order_of_the_rows_does_not_matter():
    rng = np.random.default_rng(2)
    values = list(rng.random(60))
    labels = [f"doc{i % 7}" for i in range(60)]
    reference = clustered_mean_interval(values, labels)
    base = list(rng.random(60))
    paired = clustered_paired_difference(base, values, labels)
    for _ in range(50):
        order = rng.permutation(60)
        shuffled = clustered_mean_interval([values[i] for i in order], [labels[i] for i in order])
        assert shuffled == reference
        again = clustered_paired_difference(
            [base[i] for i in order], [values[i] for i in order], [labels[i] for i in order]
        )
        assert (again.interval, again.p_value) == (paired.interval, paired.p_value)


def test_paired_interval_and_p_value_agree():
    rng = np.random.default_rng(3)
    for _ in range(30):
        a = rng.random(50)
        b = np.clip(a + rng.normal(rng.uniform(-0.2, 0.2), 0.1, 50), 0, 1)
        result = clustered_paired_difference(list(a), list(b), [i // 5 for i in range(50)])
        assert (not result.interval.contains(0.0)) == (result.p_value <= 0.05 + 1e-12)


def test_warning_below_the_documented_count():
    assert few_clusters_warning(None) is None
    assert few_clusters_warning(FEW_CLUSTERS) is None
    message = few_clusters_warning(4)
    assert message is not None
    assert "only 4 clusters" in message


def test_key_order_is_a_function_of_the_keys():
    keys = [f"case-{i}" for i in range(30)]
    order = key_order(keys)
    reversed_order = key_order(keys[::-1])
    assert [keys[i] for i in order] == [keys[::-1][i] for i in reversed_order]
