import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from oloproof_core.stats import (
    Interval,
    bounded_mean_interval,
    clopper_pearson,
    mean_interval,
    proportion_interval,
)


def test_nothing_missing_is_plain_clopper_pearson():
    assert proportion_interval(30, 30, 0) == clopper_pearson(30, 30)
    assert str(proportion_interval(30, 30, 0)) == "lower=0.8842966917779722 upper=1.0"


def test_all_missing_spans_everything():
    interval = proportion_interval(0, 0, 30)
    assert interval == Interval(0.0, 1.0)
    assert str(interval) == "lower=0.0 upper=1.0"


def test_missing_counted_worst_and_best():
    interval = proportion_interval(20, 25, 5)
    assert interval.lower == clopper_pearson(20, 30).lower
    assert interval.upper == clopper_pearson(25, 30).upper


def test_rejects_more_successes_than_observed():
    with pytest.raises(ValueError, match="n_observed"):
        proportion_interval(5, 4, 0)


@given(
    st.integers(0, 60).flatmap(
        lambda n: st.tuples(st.integers(0, n), st.just(n), st.integers(0, 20))
    ),
    st.booleans(),
)
def test_proportion_only_widens_as_cases_go_missing(case, lost_a_success):
    k, n, m = case
    before = proportion_interval(k, n, m)
    if n == 0 or (lost_a_success and k == 0) or (not lost_a_success and k == n):
        return
    after = proportion_interval(k - 1 if lost_a_success else k, n - 1, m + 1)
    assert after.lower <= before.lower
    assert after.upper >= before.upper


def test_mean_without_anything_is_full_range():
    assert mean_interval([], 0, 1.0, 5.0) == Interval(1.0, 5.0)
    assert mean_interval([], 4, 1.0, 5.0) == Interval(1.0, 5.0)


def test_mean_maps_back_to_range():
    interval = mean_interval([3.0, 4.0, 5.0, 4.0] * 10, 0, 1.0, 5.0)
    assert 1.0 <= interval.lower < 4.0 < interval.upper <= 5.0


def test_mean_rejects_out_of_range_score_by_value():
    with pytest.raises(ValueError, match=r"5\.5"):
        mean_interval([1.0, 5.5], 0, 1.0, 5.0)


def test_mean_rejects_empty_range():
    with pytest.raises(ValueError, match="range"):
        mean_interval([1.0], 0, 1.0, 1.0)


unit_scores = st.floats(0.0, 1.0, allow_nan=False)


@settings(max_examples=120, deadline=None)
@given(st.lists(unit_scores, max_size=50), st.integers(0, 10))
def test_mean_interval_holds_observed_mean_and_range(values, missing):
    interval = mean_interval(values, missing, 0.0, 1.0)
    assert 0.0 <= interval.lower <= interval.upper <= 1.0
    if values:
        assert interval.contains(float(np.mean(values)))


@settings(max_examples=120, deadline=None)
@given(st.lists(unit_scores, max_size=50), unit_scores, st.integers(0, 10))
def test_mean_only_widens_as_a_case_goes_missing(values, score, missing):
    observed = mean_interval([*values, score], missing, 0.0, 1.0)
    lost = mean_interval(values, missing + 1, 0.0, 1.0)
    # Tolerance covers the bisection's last-bit differences between runs.
    assert lost.lower <= observed.lower + 1e-9
    assert lost.upper >= observed.upper - 1e-9


def test_mean_without_missing_is_rescaled_bounded_mean():
    scores = [2.0, 3.5, 4.0, 5.0, 1.0, 4.5] * 5
    unit = bounded_mean_interval([(s - 1.0) / 4.0 for s in scores])
    interval = mean_interval(scores, 0, 1.0, 5.0)
    assert interval.lower == pytest.approx(1.0 + 4.0 * unit.lower, abs=1e-12)
    assert interval.upper == pytest.approx(1.0 + 4.0 * unit.upper, abs=1e-12)
