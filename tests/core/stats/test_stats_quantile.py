"""The order-statistic interval for a quantile: exact ranks, missing values, coverage."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.stats import binom

from oloproof_core.stats._quantile import (
    cases_for_finite_upper,
    order_ranks,
    quantile_estimate,
    quantile_interval,
)


def scipy_ranks(n: int, q: float, confidence: float) -> tuple[int, int]:
    half = (1 - confidence) / 2
    ranks = np.arange(n)
    return int(np.sum(binom.cdf(ranks, n, q) <= half)), int(
        np.sum(binom.sf(ranks, n, q) > half)
    ) + 1


@pytest.mark.parametrize("n", [1, 2, 5, 30, 71, 72, 100, 299, 1000, 4321])
@pytest.mark.parametrize("q", [0.5, 0.9, 0.95, 0.99])
@pytest.mark.parametrize("confidence", [0.9, 0.95, 0.99])
def test_ranks_are_scipys_binomial_ranks(n: int, q: float, confidence: float) -> None:
    assert order_ranks(n, q, confidence) == scipy_ranks(n, q, confidence)


def test_each_end_is_an_observed_value_at_its_rank() -> None:
    values = np.random.default_rng(3).lognormal(6, 1, 100)
    low, high = order_ranks(100, 0.5, 0.95)
    interval = quantile_interval(values, 0, 0.5)
    ordered = np.sort(values)
    assert (interval.lower, interval.upper) == (ordered[low - 1], ordered[high - 1])
    assert interval.lower <= quantile_estimate(values, 0.5) <= interval.upper  # type: ignore[operator]


def test_p95_has_an_upper_end_from_72_cases_at_95_percent() -> None:
    assert cases_for_finite_upper(0.95, 0.95) == 72
    assert quantile_interval(np.arange(1.0, 72.0), 0, 0.95).upper == math.inf
    assert quantile_interval(np.arange(1.0, 73.0), 0, 0.95).upper == 72.0


def test_missing_values_bound_every_completion() -> None:
    rng = np.random.default_rng(5)
    observed = rng.lognormal(6, 1, 190)
    interval = quantile_interval(observed, 10, 0.5)
    for _ in range(200):
        filled = np.concatenate([observed, rng.lognormal(rng.uniform(0, 12), 2, 10)])
        inner = quantile_interval(filled, 0, 0.5)
        assert interval.lower <= inner.lower
        assert inner.upper <= interval.upper


def test_many_missing_values_leave_the_upper_end_open() -> None:
    # 5 failed cases in 100 could all be the slowest: nothing bounds the p95 above.
    assert quantile_interval(np.ones(95), 5, 0.95).upper == math.inf
    assert quantile_interval(np.ones(95), 5, 0.5).upper == 1.0


def test_nothing_observed_is_the_whole_range() -> None:
    interval = quantile_interval([], 0, 0.5)
    assert (interval.lower, interval.upper) == (0.0, math.inf)


def test_estimate_is_the_inverse_of_the_empirical_distribution() -> None:
    assert quantile_estimate([4.0, 1.0, 3.0, 2.0], 0.5) == 2.0
    assert quantile_estimate([4.0, 1.0, 3.0, 2.0], 0.95) == 4.0
    assert quantile_estimate([], 0.5) is None


def test_refuses_values_below_the_floor_and_a_quantile_outside_0_1() -> None:
    with pytest.raises(ValueError, match="at or above"):
        quantile_interval([-1.0, 2.0], 0, 0.5)
    with pytest.raises(ValueError, match="strictly between"):
        order_ranks(10, 1.0, 0.95)


@pytest.mark.parametrize("q", [0.5, 0.95])
def test_covers_at_least_95_percent_of_simulated_releases(q: float) -> None:
    rng = np.random.default_rng(11)
    n, reps = 120, 3000
    truth = math.exp(6 + 1.0 * {0.5: 0.0, 0.95: 1.6448536269514722}[q])
    covered = 0
    for values in rng.lognormal(6, 1.0, (reps, n)):
        interval = quantile_interval(values, 0, q)
        covered += interval.lower <= truth <= interval.upper
    # Exact: at least 0.95 in expectation; 3,000 releases put 0.94 four standard errors below.
    assert covered / reps >= 0.94
