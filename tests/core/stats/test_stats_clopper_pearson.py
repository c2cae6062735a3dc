import pytest
from hypothesis import given
from hypothesis import strategies as st
from scipy.stats import binomtest

from oloproof_core.stats import Interval, clopper_pearson


def test_thirty_of_thirty_matches_spec_exactly():
    interval = clopper_pearson(30, 30)
    assert interval.lower == 0.8842966917779722
    assert interval.upper == 1.0
    assert str(interval) == "lower=0.8842966917779722 upper=1.0"


def test_thirty_of_thirty_closed_form():
    # With k == n the lower limit solves p^n = alpha/2.
    assert clopper_pearson(30, 30).lower == pytest.approx(0.025 ** (1 / 30), rel=1e-14)


def test_r_binom_test_documented_example():
    # R, ?binom.test example (Mendel's peas): binom.test(682, 925, p = 0.75)
    # prints "95 percent confidence interval: 0.7076683 0.7654066".
    interval = clopper_pearson(682, 925)
    assert interval.lower == pytest.approx(0.7076683, abs=5e-8)
    assert interval.upper == pytest.approx(0.7654066, abs=5e-8)


@pytest.mark.parametrize(
    ("k", "n", "confidence"),
    [(0, 1, 0.95), (1, 10, 0.95), (7, 20, 0.9), (13, 17, 0.99), (500, 1000, 0.95)],
)
def test_matches_scipy_exact_interval(k, n, confidence):
    reference = binomtest(k, n).proportion_ci(confidence_level=confidence, method="exact")
    interval = clopper_pearson(k, n, confidence)
    assert interval.lower == pytest.approx(reference.low, abs=1e-12)
    assert interval.upper == pytest.approx(reference.high, abs=1e-12)


def test_edges_are_exact():
    assert clopper_pearson(0, 0) == Interval(0.0, 1.0)
    assert clopper_pearson(0, 12).lower == 0.0
    assert clopper_pearson(12, 12).upper == 1.0


@pytest.mark.parametrize(
    ("args", "error"),
    [((5, 4), ValueError), ((-1, 4), ValueError), ((1.5, 4), TypeError), ((True, 4), TypeError)],
)
def test_rejects_bad_counts(args, error):
    with pytest.raises(error):
        clopper_pearson(*args)


@pytest.mark.parametrize("confidence", [0.0, 1.0, -0.5, float("nan")])
def test_rejects_bad_confidence(confidence):
    with pytest.raises(ValueError, match="confidence"):
        clopper_pearson(1, 2, confidence)


@given(st.integers(0, 400).flatmap(lambda n: st.tuples(st.integers(0, n), st.just(n))))
def test_contains_estimate(pair):
    k, n = pair
    interval = clopper_pearson(k, n)
    assert 0.0 <= interval.lower <= interval.upper <= 1.0
    if n:
        assert interval.contains(k / n)
