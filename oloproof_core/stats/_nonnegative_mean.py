"""Interval for a mean of non-negative, possibly unbounded values: a case's cost.

A cost is at least 0 and has no natural top. No finite-sample method bounds the
mean of such values from above: a share of cases too rare to show up in ``n``
draws can carry any amount, so a valid upper end needs a stated cap on a case's
value. Taking the observed maximum as the cap is *not* valid (a heavy tail's
unseen mass is exactly what it misses), so this module does not do that:

- with a ``cap`` (every case costs at most that, e.g. because the system's calls
  are limited so), the values are bounded and the Waudby-Smith–Ramdas betting
  interval for bounded means applies (``_missing.completed_mean_interval``);
- without one, the lower end is still valid, the upper end is infinite.

The lower end without a cap is a betting bound for non-negative values
(Waudby-Smith & Ramdas, "Estimating means of bounded random variables by
betting", JRSS-B 2024, §3 and §5 for the one-sided, non-negative case): the
capital ``K(m) = Π (1 + λᵢ(m)·(Xᵢ − m))`` with ``0 ≤ λᵢ(m) ≤ 1/(2m)`` stays
positive because ``Xᵢ ≥ 0``, is a martingale when the mean is ``m``, and by
Ville's inequality exceeds ``2/α`` with probability at most ``α/2``. With
``λᵢ(m) = min(λᵢ*, 1/(2m))`` and ``λᵢ*`` the predictable plug-in bet from the
cases read before, every factor falls as ``m`` grows, so the values of ``m`` the
capital rejects form an interval ``(0, L)`` found by bisection. Missing values
count as 0 at this end (the worst completion) and as the cap at the upper one.
"""

from __future__ import annotations

import math

import numpy as np
import numpy.typing as npt

from ._cap import CapExceededError
from ._interval import Interval
from ._missing import completed_mean_interval
from ._order import Keys, read_order
from ._validate import check_confidence

__all__ = ["CapExceededError", "nonnegative_lower_bounds", "nonnegative_mean_interval"]

_STEPS = 64


def nonnegative_mean_interval(
    column: npt.ArrayLike,
    confidence: float = 0.95,
    *,
    cap: float | None = None,
    keys: Keys = None,
) -> Interval:
    """Interval for the mean of a column of values ≥ 0 (NaN where missing).

    With ``cap`` the interval is the bounded-mean betting interval on ``[0, cap]``
    and a value above the cap raises ``CapExceededError``; without, ``[L, ∞)``.
    ``keys`` fix the reading order as for every betting interval.
    """
    values = np.array(column, dtype=np.float64)
    observed = values[~np.isnan(values)]
    if (observed < 0).any() or np.isinf(observed).any():
        raise ValueError("values must be finite and at least 0")
    if cap is not None:
        if not (cap > 0 and math.isfinite(cap)):
            raise ValueError(f"cap must be a positive number, got {cap!r}")
        above = np.flatnonzero(values > cap)
        if above.size:
            index = int(above[0])
            raise CapExceededError(index, float(values[index]), cap)
        return completed_mean_interval(values, 0.0, cap, confidence, keys=keys)
    if values.size == 0:
        return Interval(0.0, math.inf)
    ordered = np.nan_to_num(values, nan=0.0)[read_order(values.size, keys)]
    lower = float(nonnegative_lower_bounds(ordered[np.newaxis, :], confidence)[0])
    return Interval(lower, math.inf)


def _plug_in_bets(values: npt.NDArray[np.float64], log_threshold: float) -> npt.NDArray[np.float64]:
    """Each case's bet from the cases read before it (predictable), per row: the size
    that suits the spread seen so far; infinite (the cap decides) before any spread."""
    n = values.shape[1]
    count = np.arange(1, n + 1, dtype=np.float64)
    running_mean = np.cumsum(values, axis=1) / count
    squares = np.cumsum((values - running_mean) ** 2, axis=1)
    past = np.zeros_like(values)
    past[:, 1:] = squares[:, :-1] / count[:-1]
    with np.errstate(divide="ignore"):
        bets: npt.NDArray[np.float64] = np.sqrt(2.0 * log_threshold / (n * past))
    return bets


def nonnegative_lower_bounds(
    values: npt.NDArray[np.float64], confidence: float = 0.95
) -> npt.NDArray[np.float64]:
    """Each row's lower end (one-sided at ``α/2``) for the mean of its values ≥ 0,
    read in the row's order; many rows at once, so that simulations run as arrays."""
    alpha = 1.0 - check_confidence(confidence)
    log_threshold = math.log(2.0 / alpha)
    bets = _plug_in_bets(values, log_threshold)
    low = np.zeros(values.shape[0])
    high = values.max(axis=1, initial=0.0)
    for _ in range(_STEPS):
        middle = (low + high) / 2.0
        safe = np.where(middle > 0, middle, 1.0)[:, np.newaxis]
        lam = np.minimum(bets, 0.5 / safe)
        log_capital = np.log1p(lam * (values - safe)).sum(axis=1)
        rejected = (log_capital >= log_threshold) & (middle > 0)
        low = np.where(rejected, middle, low)
        high = np.where(rejected, high, middle)
    return low
