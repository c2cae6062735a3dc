"""Intervals that bound, rather than drop, missing cases.

A case whose system or evaluator raised has an unknown outcome. Dropping it
would let a system that fails on hard inputs look better than it is, so the
reported interval covers every way the missing cases could have turned out:
its lower end is the lower confidence bound with every missing case at the
worst value, its upper end the upper bound with every missing case at the
best value. This is the worst-case ("extreme scenario") bound of
Horowitz, J. L. and Manski, C. F. (2000), "Nonparametric analysis of
randomized experiments with missing covariate and outcome data", JASA
95(449), 77–84, applied to confidence limits instead of point estimates.

Why coverage survives whatever the missing outcomes are:

- Clopper–Pearson limits are monotone in the success count, so the two
  extreme completions give the smallest lower and the largest upper limit
  over all completions; the complete data's interval lies inside.
- The betting limits are not exactly monotone in each value (the bets adapt
  to the running variance), but validity does not need that. Read the
  worst-filled sequence in a uniformly random order (which is what its
  canonical order amounts to, see ``_order``), the complete data in the same
  order: the lower end's bets depend only on earlier values and earlier
  missingness, so they are predictable for the complete data too, and each
  factor ``1 + bet * (x - m)`` with a missing ``x`` at its minimum is no
  larger than with its true value. The computed capital is therefore
  dominated by a genuine test martingale on the complete data, and Ville's
  inequality still bounds the error by ``alpha``. The upper end is symmetric.
"""

from __future__ import annotations

import math

import numpy as np
import numpy.typing as npt

from ._bounded_mean import SCORE_TUNING, Sample
from ._interval import Interval
from ._order import Keys
from ._validate import check_confidence, check_count

__all__ = [
    "check_case_scores",
    "check_range",
    "completed_mean_interval",
    "mean_interval",
    "rescale",
    "unscale",
]


def check_range(low: float, high: float) -> tuple[float, float]:
    """Return ``(low, high)`` as floats, raising unless ``low < high`` and both finite."""
    lo, hi = float(low), float(high)
    if not (np.isfinite(lo) and np.isfinite(hi) and lo < hi):
        raise ValueError(f"score range must satisfy low < high (finite), got ({low!r}, {high!r})")
    return lo, hi


def rescale(values: npt.ArrayLike, low: float, high: float) -> npt.NDArray[np.float64]:
    """Map values from ``[low, high]`` onto ``[0, 1]``, naming any value outside the range."""
    array = np.asarray(values, dtype=np.float64).reshape(-1)
    bad = np.flatnonzero(~((array >= low) & (array <= high)))
    if bad.size:
        index = int(bad[0])
        raise ValueError(
            f"score {float(array[index])!r} at position {index} is outside the "
            f"declared range [{low!r}, {high!r}]"
        )
    # Clip guards against rounding nudging an in-range value past 0 or 1.
    return np.clip((array - low) / (high - low), 0.0, 1.0)


def unscale(value: float, low: float, high: float) -> float:
    """Inverse of :func:`rescale` for one point, exact at both ends of the range."""
    if value <= 0.0:
        return low
    if value >= 1.0:
        return high
    return min(high, max(low, low + value * (high - low)))


def mean_interval(
    values: npt.ArrayLike,
    n_missing: int,
    low: float,
    high: float,
    confidence: float = 0.95,
    *,
    keys: Keys = None,
) -> Interval:
    """Interval for a mean score in ``[low, high]`` with ``n_missing`` unknown scores.

    The observed scores are rescaled to ``[0, 1]``; the lower end is the
    betting lower bound (:func:`bounded_mean_interval`) with every missing
    score set to ``low``, the upper end the betting upper bound with every
    missing score set to ``high``; both are mapped back to ``[low, high]``.
    No values and nothing missing gives the whole range.

    ``keys`` names the case of each observed score and then of each missing
    one (``len(values) + n_missing`` keys); the completions are read in the
    order of the keys (``_order``), so the same cases in any order give the
    same interval. Without keys the missing scores are placed after the
    observed ones in a fixed shuffle of that order.
    """
    lo, hi = check_range(low, high)
    missing = check_count(n_missing, "n_missing")
    unit = rescale(values, lo, hi)
    completed = np.concatenate((unit, np.zeros(missing)))
    return _completions_interval(completed, slice(unit.size, None), lo, hi, confidence, keys)


def check_case_scores(
    scores: npt.NDArray[np.float64], low: float, high: float, first_case: int = 0
) -> None:
    """Raise naming the first score outside ``[low, high]`` (NaN, a missing score, is
    allowed) and its case, ``first_case`` being the place of ``scores[0]`` in the run."""
    bad = np.flatnonzero(~((scores >= low) & (scores <= high)) & ~np.isnan(scores))
    if bad.size:
        index = int(bad[0])
        raise ValueError(
            f"score {float(scores[index])!r} of case {first_case + index} is outside the "
            f"declared range [{low!r}, {high!r}]"
        )


def completed_mean_interval(
    column: npt.NDArray[np.float64],
    low: float,
    high: float,
    confidence: float = 0.95,
    *,
    keys: Keys = None,
) -> Interval:
    """:func:`mean_interval` over a column of every case's score, NaN where missing.

    ``keys`` name the column's cases in its order. Each completion keeps every case at
    its place, so the values are read in the same order, and the interval is the same
    to the last bit, as :func:`mean_interval` over the observed scores and the count of
    missing ones with their keys put in that order; no list of scores is made.
    """
    lo, hi = check_range(low, high)
    missing = np.isnan(column)
    # Missing scores start at `low`, which rescales to 0 exactly: the worst completion,
    # rescaled in place rather than through a copy per step (a million cases: 8 MB each).
    check_case_scores(column, lo, hi)
    completed = np.where(missing, lo, column)
    completed -= lo
    completed /= hi - lo
    np.clip(completed, 0.0, 1.0, out=completed)
    return _completions_interval(completed, missing, lo, hi, confidence, keys)


def _completions_interval(
    completed: npt.NDArray[np.float64],
    missing: slice | npt.NDArray[np.bool_],
    lo: float,
    hi: float,
    confidence: float,
    keys: Keys,
) -> Interval:
    """The lower end from the worst completion, the upper from the best, back in range.

    `completed` holds the observed scores on [0, 1] and 0 where `missing`: the worst
    completion. Each end is searched on its own side only, and the best completion is
    the same array set to 1 where missing, so one completion is held at a time.
    """
    level = check_confidence(confidence)
    if completed.size == 0:
        return Interval(lo, hi)
    alpha = 1.0 - level
    threshold = math.log(2.0 / alpha)  # hedged: either side's capital reaching 2 / alpha
    lower = Sample.of(completed, alpha, SCORE_TUNING, keys).end(1.0, threshold)
    completed[missing] = 1.0
    upper = Sample.of(completed, alpha, SCORE_TUNING, keys).end(-1.0, threshold)
    return Interval(unscale(lower, lo, hi), unscale(upper, lo, hi))
