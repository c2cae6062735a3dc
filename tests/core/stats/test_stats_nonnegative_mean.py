"""Intervals for a mean cost per case (non-negative, unbounded) and the cost per success."""

from __future__ import annotations

import math

import numpy as np
import pytest

from oloproof_core.stats import Interval, completed_mean_interval
from oloproof_core.stats._cost_per_success import ratio_interval, split_level
from oloproof_core.stats._nonnegative_mean import (
    CapExceededError,
    nonnegative_lower_bounds,
    nonnegative_mean_interval,
)


def test_with_a_cap_it_is_the_bounded_betting_interval_on_0_to_cap() -> None:
    costs = np.random.default_rng(1).uniform(0, 0.01, 200)
    costs[[3, 40]] = np.nan
    keys = [f"c{i}" for i in range(200)]
    expected = completed_mean_interval(costs.copy(), 0.0, 0.05, 0.95, keys=keys)
    assert nonnegative_mean_interval(costs, 0.95, cap=0.05, keys=keys) == expected


def test_a_value_above_the_cap_is_refused_with_its_case() -> None:
    with pytest.raises(CapExceededError) as raised:
        nonnegative_mean_interval([0.01, 0.2, 0.03], cap=0.05)
    assert (raised.value.index, raised.value.value, raised.value.cap) == (1, 0.2, 0.05)


def test_without_a_cap_the_upper_end_is_open_and_the_lower_below_the_mean() -> None:
    costs = np.random.default_rng(2).lognormal(-6, 1.5, 300)
    interval = nonnegative_mean_interval(costs)
    assert interval.upper == math.inf
    assert 0 < interval.lower < costs.mean()


def test_the_lower_end_counts_missing_costs_as_zero() -> None:
    costs = np.full(100, 0.01)
    whole = nonnegative_mean_interval(costs).lower
    costs[:20] = np.nan
    assert nonnegative_mean_interval(costs).lower < whole


def test_all_zero_costs_have_a_lower_end_of_zero() -> None:
    assert nonnegative_mean_interval(np.zeros(50)).lower == 0.0


def test_the_same_cases_in_any_order_give_the_same_interval() -> None:
    costs = np.random.default_rng(4).pareto(1.5, 80)
    keys = [f"c{i}" for i in range(80)]
    flipped = nonnegative_mean_interval(costs[::-1], keys=keys[::-1])
    assert nonnegative_mean_interval(costs, keys=keys) == flipped


def test_the_lower_end_misses_a_heavy_tailed_mean_at_most_2_5_percent() -> None:
    # Pareto with shape 1.5: finite mean (3 × 0.001), infinite variance.
    rng = np.random.default_rng(7)
    draws = 0.001 * (1 + rng.pareto(1.5, (4000, 100)))
    lower = nonnegative_lower_bounds(draws, 0.95)
    assert np.mean(lower > 0.003) <= 0.025 + 3 * math.sqrt(0.025 * 0.975 / 4000)
    assert np.median(lower) > 0.001  # and it says something


def test_the_ratio_interval_divides_opposite_ends() -> None:
    ratio = ratio_interval(Interval(0.01, 0.02), Interval(0.5, 0.8))
    assert ratio.lower == pytest.approx(0.0125)
    assert ratio.upper == pytest.approx(0.04)
    assert ratio_interval(Interval(0.01, 0.02), Interval(0.0, 0.3)).upper == math.inf
    assert split_level(0.95) == pytest.approx(0.975)
