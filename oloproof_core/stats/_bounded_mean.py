"""Finite-sample confidence interval for the mean of values in ``[0, 1]``.

Method: the hedged capital process with predictable plug-in bets of
Waudby-Smith, I. and Ramdas, A. (2024). "Estimating means of bounded random
variables by betting". Journal of the Royal Statistical Society, Series B
86(1), 1–27 (arXiv:2010.09686), in its fixed-sample-size form (their §5,
confidence intervals: the plug-in bet is tuned to the known ``n``).

For a candidate mean ``m`` two gamblers bet that the mean is above resp.
below ``m``::

    K_t^+(m) = prod_{i<=t} (1 + l_i^+(m) (x_i - m)),  l_i^+(m) = min(l_i, c / m)
    K_t^-(m) = prod_{i<=t} (1 - l_i^-(m) (x_i - m)),  l_i^-(m) = min(l_i, c / (1 - m))
    l_i      = sqrt(2 log(2 / alpha) / (n * s2_{i-1}))

with the regularised running mean and variance of their eq. (17). If ``m``
is the true mean both are non-negative martingales, so by Ville's inequality
the hedged capital ``max(K^+ / 2, K^- / 2)`` reaches ``1 / alpha`` at *any*
time ``t <= n`` with probability at most ``alpha``. The interval is the set
of ``m`` never rejected up to ``n``: valid for every distribution on
``[0, 1]`` and every ``n``, with no normal approximation.

Shape of the set: every factor of ``K_t^+`` is positive and non-increasing in
``m`` (both branches of the truncation are), so ``max_t K_t^+`` is
non-increasing in ``m``; symmetrically ``max_t K_t^-`` is non-decreasing. This
is the quasi-convexity of the hedged capital the paper relies on: the lower
end depends on ``K^+`` alone, the upper end on ``K^-`` alone, and each is
found by bisection on a monotone function.

Order of processing: see ``_order``. With ``keys`` (the cases' ids) the
values are read in the order of the keys' digests, so the interval is a
function of the set of cases, not of the order they were given in; without
keys, in a fixed pseudo-random permutation of the given order. Either way the
order never depends on the values, which keeps the guarantee, and it breaks up
runs of similar values that a grouped dataset (by topic, difficulty, authoring
session) would feed the adaptive bets.

Tuning. Any predictable bets and any truncation ``c < 1`` keep the guarantee;
they only move the width. Two tunings are used (figures in bench/README.md):

- scores (``SCORE_TUNING``): ``c = 3/4`` and a prior pseudo-observation of
  weight 1; the best all-round choice for values spread over the range and for
  rates near 0 or 1, where a bolder truncation loses capital on every rare value;
- paired differences (``DIFFERENCE_TUNING``): ``c = 0.99`` and prior weight
  1/5. Differences of two correlated runs sit near the middle of their range,
  where the truncation, not the variance, limits the bets; raising it and
  letting the running variance take over sooner narrows the interval by about
  a fifth at n = 100 (variance-adaptive betting in the sense of Waudby-Smith &
  Ramdas 2024, §5.1, who discuss both knobs).

What the truncation costs. Every bet must keep each factor non-negative for
every value the range allows, so ``l_i^+(m) <= 1 / m`` whatever the data show
(about 2 for differences near zero); for two strongly correlated runs the
variance-optimal bet is about twice that at n = 100, and no valid bet can take
it. Betting the largest amount allowed at every case gives 1.64 times the
paired-t width there (correlation 0.9), the engine's bets 1.66 times; the
optimal bet shrinks with n, and the ratio is 1.47 at n = 150 and 1.23 at 400. Bolder
truncations than 0.99 gain under 1 % on such data and lose 5–10 % when a few
per cent of pairs break completely (bench/README.md, "Paired score
differences").
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from ._blocks import bet_blocks, blocks, max_log_capital_of
from ._interval import Interval
from ._interval_end import confidence_set_end
from ._order import Keys, read_order
from ._validate import check_confidence

__all__ = [
    "DIFFERENCE_TUNING",
    "SCORE_TUNING",
    "BetTuning",
    "betting_p_value",
    "betting_side_p_values",
    "bounded_mean_bounds",
    "bounded_mean_interval",
    "check_unit_values",
]

FloatArray = npt.NDArray[np.float64]


@dataclass(frozen=True, slots=True)
class BetTuning:
    """How boldly the gamblers bet: truncation ``c`` and the prior's weight."""

    truncation: float = 0.75
    prior_weight: float = 1.0


# c = 3/4 (the paper suggests 1/2 or 3/4) gave up to 18 % narrower intervals
# than 1/2 for continuous and skewed scores at n <= 100 and the same width
# (within 1 %) for binary data, in the simulations recorded in bench/README.md.
SCORE_TUNING = BetTuning(0.75, 1.0)
DIFFERENCE_TUNING = BetTuning(0.99, 0.2)
_TRUNCATION = SCORE_TUNING.truncation


def check_unit_values(values: npt.ArrayLike, name: str = "values") -> FloatArray:
    """Return ``values`` as a 1-D float array, raising on anything outside ``[0, 1]``.

    The message names the first offending value and its position, since a
    score out of range is almost always a scorer bug worth locating.
    """
    array = np.asarray(values, dtype=np.float64).reshape(-1)
    bad = np.flatnonzero(~((array >= 0.0) & (array <= 1.0)))
    if bad.size:
        index = int(bad[0])
        raise ValueError(
            f"{name} must lie in [0, 1]; got {float(array[index])!r} at position {index}"
        )
    return array


def plug_in_bets(
    x: FloatArray, alpha: float, horizon: int, tuning: BetTuning = SCORE_TUNING
) -> FloatArray:
    """Predictable bets ``l_i`` from ``x_1 .. x_{i-1}`` per row (paper eq. (17), CI form).

    ``horizon`` is the sample size the bets are tuned to: the sample's own size
    for a fixed-size interval, the number of cases available for a sequence.
    """
    bets: FloatArray = np.empty_like(x)
    spans = list(blocks(x))
    found = bet_blocks((x[:, span] for span in spans), alpha, horizon, tuning.prior_weight)
    for span, block_bets in zip(spans, found, strict=True):
        bets[:, span] = block_bets
    return bets


def max_log_capital(
    x: FloatArray, bets: FloatArray, m: FloatArray, sign: float, truncation: float = _TRUNCATION
) -> FloatArray:
    """Per row: ``max_t log K_t^{sign}(m)`` over ``t = 1 .. n``."""
    pairs = ((x[:, span], bets[:, span]) for span in blocks(x))
    return max_log_capital_of(pairs, x.shape[0], m, sign, truncation)


def _prepare(
    raw: FloatArray,
    alpha: float,
    tuning: BetTuning,
    keys: Keys,
    ordered: bool,
    horizon: int | None,
) -> tuple[FloatArray, FloatArray]:
    """Put the columns in reading order (``_order``; as given if ``ordered``), compute the bets."""
    x = raw if ordered else raw[:, read_order(raw.shape[1], keys)]
    return x, plug_in_bets(x, alpha, raw.shape[1] if horizon is None else horizon, tuning)


@dataclass(frozen=True, slots=True)
class Sample:
    """One sample read for one end of an interval and its side of the test.

    The values in reading order (one row), their bets, the truncation, and where the
    search for an end starts. An interval that bounds missing values reads one
    completion for its lower end and another for its upper end: each is prepared
    once and read for its own end only.
    """

    x: FloatArray
    bets: FloatArray
    truncation: float
    centre: float

    @classmethod
    def of(
        cls,
        values: FloatArray,
        alpha: float,
        tuning: BetTuning,
        keys: Keys = None,
        *,
        ordered: bool = False,
        horizon: int | None = None,
    ) -> Sample:
        raw = check_unit_values(values)[None, :]
        x, bets = _prepare(raw, alpha, tuning, keys, ordered, horizon)
        centre = float(np.clip(x.mean(axis=1), 0.0, 1.0)[0])
        return cls(x, bets, tuning.truncation, centre)

    def end(self, sign: float, threshold: float) -> float:
        """The lower end (``sign`` 1, searched from 0) or the upper end (-1, from 1)."""
        edge = np.array([0.0 if sign > 0 else 1.0])
        centre = np.array([self.centre])
        found = interval_end(self.x, self.bets, sign, threshold, edge, centre, self.truncation)
        return float(found[0])

    def log_capital(self, m: float, sign: float) -> float:
        """``max_t log K_t^{sign}(m)``: the evidence against a mean of ``m`` on that side."""
        return float(max_log_capital(self.x, self.bets, np.array([m]), sign, self.truncation)[0])


def interval_end(
    x: FloatArray,
    bets: FloatArray,
    sign: float,
    threshold: float,
    edge: FloatArray,
    mean: FloatArray,
    truncation: float = _TRUNCATION,
) -> FloatArray:
    """End of the non-rejected set between ``edge`` (0 or 1) and ``mean``, per row.

    Returns a point that is rejected or is ``edge`` itself, so the reported
    end never cuts into the confidence set (``_interval_end``).
    """

    def capital(m: FloatArray, among: npt.NDArray[np.intp]) -> FloatArray:
        # `among` lists rows in order, once each: all of them needs no copy of the sample.
        whole = among.size == x.shape[0]
        rows_x, rows_bets = (x, bets) if whole else (x[among], bets[among])
        return max_log_capital(rows_x, rows_bets, m, sign, truncation)

    return confidence_set_end(capital, threshold, edge, mean)


def bounded_mean_bounds(
    samples: npt.ArrayLike,
    confidence: float = 0.95,
    *,
    tuning: BetTuning = SCORE_TUNING,
    keys: Keys = None,
    ordered: bool = False,
    horizon: int | None = None,
) -> FloatArray:
    """Betting intervals for many samples at once: rows of ``samples`` -> ``(rows, 2)``.

    ``samples`` is a 2-D array, one independent sample of equal size per row,
    all values in ``[0, 1]``. Used for simulations; :func:`bounded_mean_interval`
    is the one-sample entry point and gives identical results.

    ``keys`` names the case of each column and fixes the reading order
    (``_order``). ``ordered=True`` reads each row in the given order and
    ``horizon`` tunes the bets to a planned sample size: together they give
    the running (anytime-valid) interval of a sequence read so far.
    """
    level = check_confidence(confidence)
    raw = np.asarray(samples, dtype=np.float64)
    if raw.ndim != 2:
        raise ValueError(f"samples must be 2-D (rows are samples), got shape {raw.shape}")
    check_unit_values(raw, "samples")
    rows, n = raw.shape
    if n == 0:
        return np.tile(np.array([0.0, 1.0]), (rows, 1))
    alpha = 1.0 - level
    x, bets = _prepare(raw, alpha, tuning, keys, ordered, horizon)
    # Hedging with weight 1/2 on each side: reject m when one side's
    # capital reaches 2 / alpha.
    threshold = math.log(2.0 / alpha)
    mean = np.clip(x.mean(axis=1), 0.0, 1.0)
    c = tuning.truncation
    lower = interval_end(x, bets, 1.0, threshold, np.zeros(rows), mean, c)
    upper = interval_end(x, bets, -1.0, threshold, np.ones(rows), mean, c)
    return np.column_stack((lower, upper))


def bounded_mean_interval(
    values: npt.ArrayLike,
    confidence: float = 0.95,
    *,
    tuning: BetTuning = SCORE_TUNING,
    keys: Keys = None,
) -> Interval:
    """Confidence interval for the mean of i.i.d. values in ``[0, 1]``.

    Valid at every sample size (coverage at least ``confidence`` for every
    distribution on ``[0, 1]``); see the module docstring for the method.
    The ends are widened, if needed, to include the sample mean; this can
    only raise coverage and guarantees ``lower <= mean <= upper``. With
    ``keys`` (one distinct key per value, e.g. case ids) the same cases in any
    order give the same interval.

    No values gives ``[0, 1]``. A value outside ``[0, 1]`` (or NaN) raises
    ``ValueError`` naming it.
    """
    x = check_unit_values(values)
    lower, upper = bounded_mean_bounds(x[None, :], confidence, tuning=tuning, keys=keys)[0]
    return Interval(float(lower), float(upper))


def betting_side_p_values(
    lower_fill: npt.ArrayLike,
    upper_fill: npt.ArrayLike,
    null_mean: float,
    confidence: float = 0.95,
    *,
    tuning: BetTuning = SCORE_TUNING,
    keys: Keys = None,
    ordered: bool = False,
    horizon: int | None = None,
) -> tuple[float, float]:
    """One-sided p-values ``(p_above, p_below)`` for ``null_mean`` from the interval's capital.

    ``p_above = min(1, 1 / sup_t K_t^+)`` measures the evidence that the mean
    is above ``null_mean`` (computed on ``lower_fill``), ``p_below`` that it is
    below (on ``upper_fill``). Each is valid at every level by Ville's
    inequality, and ``p_above <= (1 - confidence) / 2`` exactly when the
    interval's lower end is above ``null_mean`` (the same capital, the same
    bets, the same order). ``keys``, ``ordered`` and ``horizon`` as for
    :func:`bounded_mean_bounds`.
    """
    level = check_confidence(confidence)
    low_side = check_unit_values(lower_fill, "lower_fill")
    high_side = check_unit_values(upper_fill, "upper_fill")
    if low_side.size != high_side.size:
        raise ValueError("lower_fill and upper_fill must have the same length")
    if low_side.size == 0:
        return 1.0, 1.0
    m = np.array([float(null_mean)])
    if not 0.0 <= m[0] <= 1.0:
        raise ValueError(f"null_mean must lie in [0, 1], got {null_mean!r}")
    alpha = 1.0 - level
    c = tuning.truncation
    x_plus, bets_plus = _prepare(low_side[None, :], alpha, tuning, keys, ordered, horizon)
    x_minus, bets_minus = _prepare(high_side[None, :], alpha, tuning, keys, ordered, horizon)
    plus = float(max_log_capital(x_plus, bets_plus, m, 1.0, c)[0])
    minus = float(max_log_capital(x_minus, bets_minus, m, -1.0, c)[0])
    return min(1.0, math.exp(-max(plus, 0.0))), min(1.0, math.exp(-max(minus, 0.0)))


def betting_p_value(
    lower_fill: npt.ArrayLike,
    upper_fill: npt.ArrayLike,
    null_mean: float,
    confidence: float = 0.95,
    *,
    tuning: BetTuning = SCORE_TUNING,
    keys: Keys = None,
) -> float:
    """Two-sided p-value for ``mean == null_mean`` from the same hedged capital as the interval.

    ``p = min(1, 1 / sup_t max(K_t^+ / 2, K_t^- / 2))`` is valid at every level
    by Ville's inequality (Shafer, G. (2021), "Testing by betting", JRSS-A
    184(2), 407–431; Waudby-Smith & Ramdas 2024, §3). With the bets tuned
    to ``confidence`` it agrees with :func:`bounded_mean_bounds`: ``p <= 1 -
    confidence`` exactly when ``null_mean`` is outside the interval.

    ``K^+`` (evidence that the mean is above ``null_mean``) is computed on
    ``lower_fill`` and ``K^-`` on ``upper_fill``. Passing the data with
    unknown values set to their worst resp. best case gives the largest
    p-value over those completions' capitals; with nothing unknown pass the
    same array twice. Both arrays must have the same length.
    """
    above, below = betting_side_p_values(
        lower_fill, upper_fill, null_mean, confidence, tuning=tuning, keys=keys
    )
    return min(1.0, 2.0 * min(above, below))
