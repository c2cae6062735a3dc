"""Where a confidence set ends: the boundary between rejected and kept candidate means.

The betting capital is monotone in the candidate mean on each side of the sample
mean, so each end of the interval is the one point where the capital crosses the
rejection threshold. Each evaluation reads the whole sample (at 100,000 cases a
millisecond), so the number of evaluations is the cost of an interval.

Method: the ITP method (Oliveira, I. F. D. and Takahashi, R. H. C. (2020). "An
Enhancement of the Bisection Method Average Performance Preserving Minmax
Optimality". ACM Transactions on Mathematical Software 47(1), 5): a false-position
step, truncated towards the midpoint and projected into a shrinking radius around
it, so it never takes more than one step beyond the halvings a bisection needs and,
on the capital's smooth curve, far fewer. The bracket always holds a rejected and a
kept point, as a bisection's does, and the rejected one is returned once the
bracket is below `TOLERANCE`: the reported end never cuts into the confidence set.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import numpy.typing as npt

__all__ = ["MAX_STEPS", "TOLERANCE", "confidence_set_end", "last_rejected"]

FloatArray = npt.NDArray[np.float64]
IndexArray = npt.NDArray[np.intp]

TOLERANCE = 2.3e-13
"""Width of the final bracket: what 42 halvings of [0, 1] leave, far below any shown figure."""
MAX_STEPS = 64
"""More than ITP can take from a bracket of at most 1 (43 steps); a guard, never reached."""
# The method's parameters: one spare step over bisection's count, and the truncation
# kappa_1 = 0.2 / (b - a) with kappa_2 = 2, as the paper recommends.
_SPARE_STEPS = 1
_TRUNCATION = 0.2


def confidence_set_end(
    capital: Callable[[FloatArray, IndexArray], FloatArray],
    threshold: float,
    edge: FloatArray,
    mean: FloatArray,
) -> FloatArray:
    """Per row, the end of the non-rejected set between `edge` (0 or 1) and `mean`.

    `capital(m, rows)` is each of `rows`' evidence (log-capital) against a mean of `m`
    on the side of `edge`; `m` is rejected where it reaches `threshold`. Returns a point
    that is rejected or is `edge` itself, so the reported end never cuts into the set.
    """

    def excess(m: FloatArray, among: IndexArray) -> FloatArray:
        return capital(m, among) - threshold

    every_row = np.arange(edge.size)
    at_edge, at_mean = excess(edge, every_row), excess(mean, every_row)
    result = edge.copy()
    # Rejected even at the sample mean: only possible for adversarially
    # ordered data; reporting the mean widens the set and keeps validity.
    beyond = (at_edge >= 0.0) & (at_mean >= 0.0)
    result[beyond] = mean[beyond]
    rows = np.flatnonzero((at_edge >= 0.0) & (at_mean < 0.0))
    if rows.size:
        found = last_rejected(
            lambda m, among: excess(m, rows[among]),
            edge[rows],
            mean[rows],
            known=(at_edge[rows], at_mean[rows]),
        )
        result[rows] = found
    return result


def last_rejected(
    excess: Callable[[FloatArray, IndexArray], FloatArray],
    rejected_at: FloatArray,
    kept_at: FloatArray,
    *,
    known: tuple[FloatArray, FloatArray] | None = None,
) -> FloatArray:
    """Per row, the rejected end of a bracket narrowed to `TOLERANCE` around the boundary.

    `excess(m, rows)` is, for each of `rows`, the log-capital at candidate `m` minus
    the rejection threshold: at least 0 means rejected. It must be monotone between
    `rejected_at` (rejected on every row) and `kept_at` (kept on every row);
    `known`, when the caller has them, is the excess at those two points.
    """
    if known is None:
        every_row = np.arange(rejected_at.size)
        known = excess(rejected_at, every_row), excess(kept_at, every_row)
    low, high, f_low, f_high = _ordered_bracket(rejected_at, kept_at, *known)
    width = high - low
    with np.errstate(divide="ignore"):
        halvings = np.ceil(np.log2(np.maximum(width, TOLERANCE) / TOLERANCE))
    epsilon = TOLERANCE / 2.0
    allowed = halvings + _SPARE_STEPS
    kappa = _TRUNCATION / np.where(width > 0.0, width, 1.0)
    for step in range(MAX_STEPS):
        rows = np.flatnonzero(width > TOLERANCE)
        if rows.size == 0:
            break
        a, b, fa, fb = low[rows], high[rows], f_low[rows], f_high[rows]
        radius = epsilon * np.exp2(allowed[rows] - step) - 0.5 * width[rows]
        point = _itp_point(a, b, fa, fb, kappa[rows], radius)
        value = excess(point, rows)
        # Rejected points (excess >= 0) replace the end that is rejected.
        low_rejected = fa >= 0.0
        replaces_low = (value >= 0.0) == low_rejected
        low[rows] = np.where(replaces_low, point, a)
        f_low[rows] = np.where(replaces_low, value, fa)
        high[rows] = np.where(replaces_low, b, point)
        f_high[rows] = np.where(replaces_low, fb, value)
        width[rows] = high[rows] - low[rows]
    result: FloatArray = np.where(f_low >= 0.0, low, high)
    return result


def _ordered_bracket(
    rejected_at: FloatArray, kept_at: FloatArray, f_rejected: FloatArray, f_kept: FloatArray
) -> tuple[FloatArray, FloatArray, FloatArray, FloatArray]:
    """The bracket as [low, high] in increasing order, with the excess at each end."""
    rejected_low = rejected_at <= kept_at
    low = np.where(rejected_low, rejected_at, kept_at).astype(np.float64)
    high = np.where(rejected_low, kept_at, rejected_at).astype(np.float64)
    f_low = np.where(rejected_low, f_rejected, f_kept).astype(np.float64)
    f_high = np.where(rejected_low, f_kept, f_rejected).astype(np.float64)
    return low, high, f_low, f_high


def _itp_point(
    a: FloatArray,
    b: FloatArray,
    fa: FloatArray,
    fb: FloatArray,
    kappa: FloatArray,
    radius: FloatArray,
) -> FloatArray:
    """The next point of brackets [a, b]: false position, truncated, then projected."""
    middle = 0.5 * (a + b)
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        falsi = (fb * a - fa * b) / (fb - fa)
    falsi = np.where(np.isfinite(falsi), np.clip(falsi, a, b), middle)
    towards = np.sign(middle - falsi)
    shift = kappa * (b - a) ** 2
    truncated = np.where(shift <= np.abs(middle - falsi), falsi + towards * shift, middle)
    point = np.where(np.abs(truncated - middle) <= radius, truncated, middle - towards * radius)
    # Within rounding of an end (the truncation's shift is below a float's step
    # there), a step repeats a known point: take half the tolerance into the
    # bracket instead, which crosses the boundary when it is that close.
    epsilon = TOLERANCE / 2.0
    result: FloatArray = np.clip(point, a + epsilon, b - epsilon)
    return result
