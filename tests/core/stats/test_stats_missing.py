import pytest
from hypothesis import given
from hypothesis import strategies as st

from oloproof_core.stats import Interval, clopper_pearson, mean_interval, proportion_interval


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
