"""Cases for 80 % power: the exact pass/fail plan, also near rates of 0 and 1."""

from __future__ import annotations

import pytest
from scipy.stats import binom

from oloproof_core.stats import proportion_cases_for_power


def exact_power(n: int, rate: float, threshold: float) -> float:
    k_needed = binom.isf(0.025, n, threshold) + 1
    return float(binom.sf(k_needed - 1, n, rate))


@pytest.mark.parametrize(
    ("rate", "threshold"), [(0.9, 0.8), (0.999, 0.99), (0.9999, 0.999), (0.001, 0.01)]
)
def test_the_exact_plan_is_the_first_size_that_reaches_80_percent(rate, threshold):
    n = proportion_cases_for_power(rate, threshold)
    assert n is not None
    if rate < threshold:  # a max rule: the mirror image
        rate, threshold = 1 - rate, 1 - threshold
    assert exact_power(n, rate, threshold) >= 0.8
    assert exact_power(n - 1, rate, threshold) < 0.8
