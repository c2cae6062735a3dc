"""Exact, distribution-free interval for a quantile (latency p50, p95) from order statistics.

For ``n`` independent draws of any distribution and its ``q``-quantile ``x_q``
(the smallest ``x`` with ``F(x) ≥ q``), the number of draws below ``x_q`` is at
most ``Binomial(n, q)`` and the number at or below it at least that: so with
``l`` the largest rank for which ``P(B ≤ l − 1) ≤ α/2`` and ``u`` the smallest
for which ``P(B ≥ u) ≤ α/2`` (``B ~ Binomial(n, q)``), ``X_(l) ≤ x_q ≤ X_(u)``
fails on either side with probability at most ``α/2``, whatever the
distribution, ties included (Hahn & Meeker, *Statistical Intervals*, 1991,
§5.2; David & Nagaraja, *Order Statistics*, 3rd ed., §7.1). A rank below 1 has
no draw under it (the lower end is the floor, 0 for a latency), a rank above
``n`` none over it (the upper end is infinite): with few cases a high quantile
has no finite upper end, from ``log(α/2) / log(q)`` cases on it has one (72 for
p95 at 95 %).

Missing values (cases whose system failed: there is no reply whose time to
measure) are bounded by their most extreme completions, as every figure bounds
them ("missing, not wrong"): the lower end ranks them at the floor, the upper
end at infinity. Order statistics only grow with the values, so the interval
of every possible completion lies inside these two ends.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING, Any

from ._beta_quantile import _tails
from ._interval import Interval
from ._validate import check_confidence, check_count

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

__all__ = ["cases_for_finite_upper", "order_ranks", "quantile_estimate", "quantile_interval"]


def order_ranks(n: int, q: float, confidence: float) -> tuple[int, int]:
    """The 1-based ranks ``(l, u)`` of the interval's ends among ``n`` values.

    ``l == 0`` means no value bounds the quantile from below, ``u == n + 1`` none
    from above, at this level.
    """
    level = check_confidence(confidence)
    if not 0.0 < q < 1.0:
        raise ValueError(f"q must be strictly between 0 and 1, got {q!r}")
    half = (1.0 - level) / 2.0

    def at_most(k: int) -> float:  # P(B ≤ k) = I_{1-q}(n - k, k + 1), for k < n
        return _tails(1.0 - q, n - k, k + 1)[0]

    def above(k: int) -> float:  # P(B > k) = I_q(k + 1, n - k), for k < n
        return _tails(q, k + 1, n - k)[0]

    # Both tails are monotone in k, so each rank is found by bisection (SciPy's binomial
    # would cost every command a third of a second to import).
    low_rank = _first(n, lambda k: at_most(k) > half)
    high_rank = _first(n, lambda k: above(k) <= half) + 1
    return low_rank, high_rank


def _first(n: int, holds: Callable[[int], bool]) -> int:
    """The least k in [0, n) for which the monotone `holds` is true, else n."""
    low, high = 0, n
    while low < high:
        middle = (low + high) // 2
        if holds(middle):
            high = middle
        else:
            low = middle + 1
    return low


def quantile_interval(
    observed: Iterable[float],
    n_missing: int,
    q: float,
    confidence: float = 0.95,
    *,
    floor: float = 0.0,
) -> Interval:
    """Interval for the ``q``-quantile of the values behind ``observed`` and ``n_missing``
    unknown ones; ``floor`` is the least value possible (0 for a time)."""
    values = _ascending(observed)
    missing = check_count(n_missing, "n_missing")
    if any(math.isnan(value) or value < floor for value in values):
        raise ValueError(f"values must be numbers at or above {floor!r}")
    n = len(values) + missing
    if n == 0:
        return Interval(floor, math.inf)
    low_rank, high_rank = order_ranks(n, q, confidence)
    # Lower end: the missing values ranked first (at the floor); upper: ranked last.
    lower = floor if low_rank <= missing else float(values[low_rank - missing - 1])
    upper = float(values[high_rank - 1]) if high_rank <= len(values) else math.inf
    return Interval(lower, upper)


def quantile_estimate(observed: Iterable[float], q: float) -> float | None:
    """The observed values' ``q``-quantile: the smallest value with at least a share
    ``q`` of them at or below it (the inverse of the empirical distribution)."""
    values = _ascending(observed)
    if not len(values):
        return None
    return float(values[max(0, math.ceil(q * len(values)) - 1)])


def _ascending(observed: Iterable[float]) -> Sequence[float] | npt.NDArray[np.float64]:
    """The values in ascending order. Plain sorting for plain values, no NumPy: a run's
    report shows these for every run, and a pass/fail run otherwise loads no NumPy at
    all; a NumPy column (a worker's) is sorted as one, at 8 bytes a value."""
    column: Any = observed
    if hasattr(column, "dtype"):
        import numpy as np

        return np.sort(np.asarray(column, dtype=np.float64))
    return sorted(float(value) for value in observed)


def cases_for_finite_upper(q: float, confidence: float) -> int:
    """Fewest cases whose interval for the ``q``-quantile has a finite upper end."""
    half = (1.0 - check_confidence(confidence)) / 2.0
    n = max(1, math.ceil(math.log(half) / math.log(q)))
    while q**n > half:  # the logarithms' rounding, settled exactly
        n += 1
    return n
