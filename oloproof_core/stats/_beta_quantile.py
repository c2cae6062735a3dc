"""The beta distribution's quantile: the x with I_x(a, b) = p.

I is the regularized incomplete beta function, evaluated by its continued fraction
(DLMF 8.17.22) on the side of the mean where the fraction converges quickly, with
I_x(a, b) = 1 - I_{1-x}(b, a) on the other. The quantile is Newton's root of
I_x(a, b) - p, each step kept inside a bracket that shrinks with every evaluation,
so it cannot diverge; b = 1 and a = 1 have closed forms.

Computed here rather than imported: `scipy.special.betaincinv` is the same function,
but importing `scipy.special` costs every command about a third of a second, more
than all the rest of a small run. The tests check this against SciPy.
"""

from __future__ import annotations

import math

__all__ = ["beta_quantile", "regularized_beta"]

# Both are reached at about sqrt(max(a, b)) terms near the mean (a few thousand at
# ten million cases), so the limit only stops a fraction that will not converge.
_MAX_TERMS = 1_000_000
_MAX_STEPS = 2_000
_FLOOR = 1e-300  # keeps the fraction's running terms off zero
_CONVERGED = 1e-16


_HALF_LOG_TWO_PI = 0.5 * math.log(2.0 * math.pi)
_STIRLING_FROM = 20.0  # the series below is within 2e-15 of lgamma from here on


def _stirling_remainder(z: float) -> float:
    """lgamma(z) - ((z - 1/2) ln z - z + ln(2 pi) / 2), by Stirling's series."""
    square = z * z
    return (1 / 12 - (1 / 360 - (1 / 1260 - 1 / (1680 * square)) / square) / square) / z


def _log_beta(a: float, b: float) -> float:
    # lgamma(a) + lgamma(b) - lgamma(a + b) cancels large terms when an argument is
    # large (an absolute error of 1e-8 at ten million); Stirling's series takes the
    # differences of logarithms directly instead.
    small, large = min(a, b), max(a, b)
    if large < _STIRLING_FROM:
        return math.lgamma(a) + math.lgamma(b) - math.lgamma(a + b)
    total = small + large
    remainders = _stirling_remainder(large) - _stirling_remainder(total)
    if small < _STIRLING_FROM:
        large_over_total = -(large - 0.5) * math.log1p(small / large) - small * math.log(total)
        return math.lgamma(small) + large_over_total + small + remainders
    return (
        _HALF_LOG_TWO_PI
        + (small - 0.5) * math.log(small / total)
        + (large - 0.5) * math.log1p(-small / total)
        - 0.5 * math.log(total)
        + _stirling_remainder(small)
        + remainders
    )


def _continued_fraction(x: float, a: float, b: float) -> float:
    """The fraction of I_x(a, b) = x^a (1-x)^b / (a B(a, b)) * fraction (modified Lentz)."""
    numerator_side, denominator_side = 1.0, 1.0 - (a + b) * x / (a + 1.0)
    denominator_side = 1.0 / (denominator_side if abs(denominator_side) > _FLOOR else _FLOOR)
    value = denominator_side
    for m in range(1, _MAX_TERMS):
        for coefficient in (
            m * (b - m) * x / ((a + 2 * m - 1) * (a + 2 * m)),
            -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1)),
        ):
            denominator_side = 1.0 + coefficient * denominator_side
            numerator_side = 1.0 + coefficient / numerator_side
            if abs(denominator_side) < _FLOOR:
                denominator_side = _FLOOR
            if abs(numerator_side) < _FLOOR:
                numerator_side = _FLOOR
            denominator_side = 1.0 / denominator_side
            factor = denominator_side * numerator_side
            value *= factor
        if abs(factor - 1.0) < _CONVERGED:
            return value
    raise ArithmeticError(f"the incomplete beta fraction did not converge (a={a}, b={b}, x={x})")


def _tails(x: float, a: float, b: float) -> tuple[float, float]:
    """(I_x(a, b), 1 - I_x(a, b)), each computed without cancelling the other."""
    if x <= 0.0:
        return 0.0, 1.0
    if x >= 1.0:
        return 1.0, 0.0
    log_front = a * math.log(x) + b * math.log1p(-x) - _log_beta(a, b)
    if x < (a + 1.0) / (a + b + 2.0):
        lower = math.exp(log_front) * _continued_fraction(x, a, b) / a
        return lower, 1.0 - lower
    upper = math.exp(log_front) * _continued_fraction(1.0 - x, b, a) / b
    return 1.0 - upper, upper


def regularized_beta(x: float, a: float, b: float) -> float:
    """I_x(a, b), the beta distribution's cumulative probability at ``x``."""
    return _tails(x, a, b)[0]


def beta_quantile(p: float, a: float, b: float) -> float:
    """The ``p`` quantile of Beta(a, b), ``a, b > 0``, ``0 <= p <= 1``."""
    if not (a > 0.0 and b > 0.0 and 0.0 <= p <= 1.0):
        raise ValueError(f"beta_quantile needs a, b > 0 and 0 <= p <= 1, got {p}, {a}, {b}")
    if p == 0.0 or p == 1.0:
        return p
    if b == 1.0:  # I_x(a, 1) = x^a
        return math.exp(math.log(p) / a)
    if a == 1.0:  # I_x(1, b) = 1 - (1 - x)^b
        return -math.expm1(math.log1p(-p) / b)
    return _newton_root(p, a, b)


def _newton_root(p: float, a: float, b: float) -> float:
    # The side with the smaller target keeps its relative precision: p near 1 is
    # solved as 1 - I = 1 - p.
    upper_tail = p > 0.5
    target = 1.0 - p if upper_tail else p
    log_beta = _log_beta(a, b)
    low, high = 0.0, 1.0
    x = a / (a + b)
    for _ in range(_MAX_STEPS):
        lower, upper = _tails(x, a, b)
        excess = (target - upper) if upper_tail else (lower - target)
        if excess == 0.0:
            return x
        if excess < 0.0:
            low = x
        else:
            high = x
        log_density = (a - 1.0) * math.log(x) + (b - 1.0) * math.log1p(-x) - log_beta
        step = excess / math.exp(log_density) if log_density > -700.0 else math.inf
        following = x - step
        if not low < following < high:
            following = 0.5 * (low + high)
        if following == x or abs(following - x) <= 2e-16 * x:
            return following
        x = following
    raise ArithmeticError(f"the beta quantile did not converge (p={p}, a={a}, b={b})")
