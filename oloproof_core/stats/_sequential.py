"""Anytime-valid intervals for a sequence of cases read a batch at a time.

A gate that is re-checked as cases are added, and stops as soon as an interval
clears its threshold, needs an interval that is valid at every look, not only
at a sample size fixed in advance: re-checking a fixed-size interval every 20
cases passes a gate at its threshold far more often than the nominal 2.5 %.
The hedged capital of Waudby-Smith & Ramdas (2024) is a nonnegative martingale
under the null whatever the (predictable) bets, so by Ville's inequality it
exceeds ``2 / alpha`` *at any time* with probability at most ``alpha / 2``: the
running interval (every mean never rejected up to now) is a confidence
sequence (their §3; Howard, S. R., Ramdas, A., McAuliffe, J. and Sekhon, J.
(2021), "Time-uniform, nonparametric, nonasymptotic confidence sequences",
Annals of Statistics 49(2), 1055–1080, for the general construction).

Bets are the plug-in bets tuned to the *horizon*, the number of cases available
(known before the first case is run, so predictable), which makes the sequence
tightest when the cases run out. The cases are read in the order of their ids'
digests (``_order``), the same order the runner adds them in, so the cases seen
at a look are a prefix of that order and the decision at every look is a
function of the set of cases run so far.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Sequence

import numpy as np
import numpy.typing as npt

from ._bounded_mean import SCORE_TUNING, BetTuning, Sample, betting_side_p_values
from ._order import key_order
from ._validate import check_confidence

__all__ = ["case_means", "running_interval", "running_side_p_values"]

FloatArray = npt.NDArray[np.float64]


def _in_order(
    worst: npt.ArrayLike, best: npt.ArrayLike, keys: Sequence[Hashable]
) -> tuple[FloatArray, FloatArray]:
    low = np.asarray(worst, dtype=np.float64).reshape(-1)
    high = np.asarray(best, dtype=np.float64).reshape(-1)
    if not low.size == high.size == len(keys):
        raise ValueError("worst, best and keys must have the same length")
    order = key_order(keys)
    return low[order], high[order]


def running_interval(
    worst: npt.ArrayLike,
    best: npt.ArrayLike,
    keys: Sequence[Hashable],
    horizon: int,
    confidence: float = 0.95,
    *,
    tuning: BetTuning = SCORE_TUNING,
) -> tuple[float, float]:
    """The confidence sequence on ``[0, 1]`` after the cases seen so far.

    ``worst`` and ``best`` are the unit values with missing ones at their worst
    and best (equal when nothing is missing), ``keys`` the cases' ids, and
    ``horizon`` the number of cases that may eventually be run (at least the
    number seen). Valid simultaneously over every look.
    """
    level = check_confidence(confidence)
    low, high = _in_order(worst, best, keys)
    if low.size == 0:
        return 0.0, 1.0
    size = max(int(horizon), low.size)
    alpha = 1.0 - level
    threshold = math.log(2.0 / alpha)
    # Each completion is read for its own end only.
    lowest = Sample.of(low, alpha, tuning, ordered=True, horizon=size)
    highest = Sample.of(high, alpha, tuning, ordered=True, horizon=size)
    return lowest.end(1.0, threshold), highest.end(-1.0, threshold)


def running_side_p_values(
    worst: npt.ArrayLike,
    best: npt.ArrayLike,
    keys: Sequence[Hashable],
    null_mean: float,
    horizon: int,
    confidence: float = 0.95,
    *,
    tuning: BetTuning = SCORE_TUNING,
) -> tuple[float, float]:
    """Anytime-valid one-sided p-values ``(p_above, p_below)`` matching :func:`running_interval`."""
    low, high = _in_order(worst, best, keys)
    size = max(int(horizon), low.size)
    return betting_side_p_values(
        low, high, null_mean, confidence, tuning=tuning, ordered=True, horizon=size
    )


def case_means(
    worst: npt.ArrayLike, best: npt.ArrayLike, keys: Sequence[str], cases: Sequence[str]
) -> tuple[FloatArray, FloatArray, list[str]] | None:
    """Each case's mean of its repeats (``cases`` names each row's case), for
    ``running_interval`` to read cases, not repeats, as its units; None unless every
    case has as many rows as every other.

    With equal counts the mean over cases of the case means is the mean over rows, and
    the case means are independent of each other, as ``running_interval`` needs. A run
    that adds whole cases in the order of their ids' digests then shows, at every look,
    a prefix of that order: so the keys returned are the cases' own ids.
    """
    low = np.asarray(worst, dtype=np.float64).reshape(-1)
    high = np.asarray(best, dtype=np.float64).reshape(-1)
    if not low.size == high.size == len(keys) == len(cases):
        raise ValueError("worst, best, keys and cases must have the same length")
    names, index, counts = np.unique(
        np.asarray(cases, dtype=object), return_inverse=True, return_counts=True
    )
    if counts.size == 0 or counts.min() != counts.max():
        return None
    sums_low = np.bincount(index, weights=low, minlength=names.size)
    sums_high = np.bincount(index, weights=high, minlength=names.size)
    return sums_low / counts, sums_high / counts, [str(name) for name in names]
