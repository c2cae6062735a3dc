"""The beta quantile behind the exact interval, against SciPy's `betaincinv`."""

from __future__ import annotations

import math
import random

import pytest
from scipy.special import betainc, betaincinv

from oloproof_core.stats._beta_quantile import beta_quantile, regularized_beta


def _clopper_pearson_arguments() -> list[tuple[float, float, float]]:
    grid = []
    for n in (1, 2, 5, 30, 100, 1_000, 100_000, 10_000_000):
        for k in sorted(k for k in {0, 1, 2, n // 10, n // 2, n - 1, n} if k <= n):
            for confidence in (0.8, 0.95, 0.999):
                tail = (1 - confidence) / 2
                if k > 0:
                    grid.append((tail, k, n - k + 1))
                if k < n:
                    grid.append((1 - tail, k + 1, n - k))
    return grid


@pytest.mark.parametrize(("p", "a", "b"), _clopper_pearson_arguments())
def test_matches_scipy_on_the_exact_intervals_arguments(p: float, a: float, b: float) -> None:
    assert beta_quantile(p, a, b) == pytest.approx(float(betaincinv(a, b, p)), rel=1e-9, abs=1e-13)


def test_matches_scipy_on_random_shapes_and_probabilities() -> None:
    rng = random.Random(7)
    for _ in range(400):
        a, b = 10 ** rng.uniform(-1, 6), 10 ** rng.uniform(-1, 6)
        p = rng.random()
        expected = float(betaincinv(a, b, p))
        assert beta_quantile(p, a, b) == pytest.approx(expected, rel=1e-9, abs=1e-13), (p, a, b)


def test_fractional_counts_of_the_sample_size_readout() -> None:
    # cases_needed keeps the success count fractional (rate * n).
    for n in (7.0, 230.0, 9_603.0, 2_000_000.0):
        successes = 0.83 * n
        expected = float(betaincinv(successes, n - successes + 1.0, 0.025))
        assert beta_quantile(0.025, successes, n - successes + 1.0) == pytest.approx(
            expected, rel=1e-9
        )


def test_closed_forms_are_exact() -> None:
    # The SPEC's 30 of 30: the lower end solves x^30 = 0.025.
    assert beta_quantile(0.025, 30, 1) == 0.8842966917779722
    assert beta_quantile(0.975, 1, 30) == -math.expm1(math.log1p(-0.975) / 30)
    assert beta_quantile(0.0, 3, 4) == 0.0
    assert beta_quantile(1.0, 3, 4) == 1.0


def test_quantile_inverts_the_distribution_function() -> None:
    for p, a, b in [(0.025, 682, 244), (0.975, 5.5, 0.3), (0.5, 0.2, 0.2), (1e-6, 40, 3)]:
        x = beta_quantile(p, a, b)
        assert regularized_beta(x, a, b) == pytest.approx(p, rel=1e-10)
        assert regularized_beta(x, a, b) == pytest.approx(float(betainc(a, b, x)), rel=1e-10)


@pytest.mark.parametrize(
    ("p", "a", "b"), [(0.5, 0, 1), (0.5, 1, -2), (1.5, 2, 2), (math.nan, 2, 2)]
)
def test_rejects_arguments_outside_the_distribution(p: float, a: float, b: float) -> None:
    with pytest.raises(ValueError, match="beta_quantile"):
        beta_quantile(p, a, b)
