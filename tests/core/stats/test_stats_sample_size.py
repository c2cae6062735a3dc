import pytest
from scipy.stats import beta

from oloproof_core.stats import MAX_CASES, cases_needed, clopper_pearson


def fractional_lower(rate, n):
    k = rate * n
    return beta.ppf(0.025, k, n - k + 1)


def test_rate_equal_to_threshold_is_never_conclusive():
    assert cases_needed(0.9, 0.9, 30) is None


def test_already_conclusive_needs_nothing():
    # 30 of 30 excludes 0.8 (lower limit 0.884).
    assert cases_needed(1.0, 0.8, 30) == 0


def test_answer_is_the_smallest_conclusive_total():
    extra = cases_needed(0.95, 0.9, 30)
    assert extra is not None
    total = 30 + extra
    assert fractional_lower(0.95, total) > 0.9
    assert fractional_lower(0.95, total - 1) <= 0.9
    # The integer interval at that size agrees: it clears the threshold.
    assert clopper_pearson(round(0.95 * total), total).lower > 0.9


def test_below_threshold_uses_upper_limit():
    extra = cases_needed(0.8, 0.9, 20)
    assert extra is not None
    total = 20 + extra
    assert clopper_pearson(round(0.8 * total), total).upper < 0.9


def test_hopeless_margin_is_capped():
    assert cases_needed(0.5001, 0.5, 100) is None
    assert MAX_CASES == 10_000_000


def test_mean_kind_uses_score_range():
    on_unit = cases_needed(0.875, 0.75, 10, kind="mean")
    on_likert = cases_needed(4.5, 4.0, 10, kind="mean", low=1.0, high=5.0)
    assert on_unit == on_likert


@pytest.mark.parametrize(
    ("args", "kwargs"),
    [((1.2, 0.5, 10), {}), ((0.5, 0.4, 10), {"kind": "ratio"}), ((0.5, 0.4, -1), {})],
)
def test_rejects_bad_arguments(args, kwargs):
    with pytest.raises(ValueError, match=r"outside|kind|n_current"):
        cases_needed(*args, **kwargs)
