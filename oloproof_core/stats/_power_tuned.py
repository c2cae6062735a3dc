"""A prediction-powered betting interval that learns from the labels how far to lean on the judge.

The mean truth of the observed cases can be written, for any ``lambda``, as

    ybar = lambda * fbar + E[w (y - lambda f)],

``fbar`` the judge's mean over every case (known exactly), ``w = 1 / (n q)`` the draw's
inverse weight. ``lambda = 1`` is classic prediction-powered inference (Angelopoulos et
al. 2023); ``lambda = 0`` the labels alone; the variance of the rectified term is
smallest at ``lambda = cov(w y, w f) / var(w f)``, the power tuning of PPI++
(Angelopoulos, Duchi and Zrnic (2023), "PPI++: Efficient prediction-powered
inference", arXiv:2311.01453). PPI++ estimates ``lambda`` from all the labels and
then trusts a normal approximation; here each draw ``t`` gets its own ``lambda_t``,
computed from the draws before it only, and its term

    Z_t = lambda_t fbar + w_t (y_t - lambda_t f_t)

has conditional mean exactly ``ybar`` whatever ``lambda_t`` is. The betting
martingales of Waudby-Smith and Ramdas (2024, see ``_bounded_mean``) need nothing
more: every bet and every ``lambda_t`` is predictable, each ``Z_t`` lies in a range
``[a_t, b_t]`` known before it is drawn (from ``lambda_t``, the judge's verdicts and
the largest weight), and the bets are truncated so that each factor stays
non-negative on that range. Ville's inequality then bounds the chance that the true
mean is ever rejected by ``alpha``, for every judge and at every number of labels.

Why it adapts: a judge that agrees with people gets ``lambda_t`` near its agreement's
slope and a small spread of ``Z_t``; a coin gets ``lambda_t`` near 0, where ``Z_t`` is
the label itself on ``[0, 1]`` and the interval is close to the labels-only betting
interval. ``lambda_t`` is a ridge estimate pulled towards 0 by a prior of
``LEAN_PRIOR`` pseudo-draws, so the first few draws lean on nobody.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from ._bounded_mean import BetTuning
from ._interval_end import confidence_set_end

__all__ = ["LEAN_PRIOR", "Rectified", "power_tuned_bounds"]

FloatArray = npt.NDArray[np.float64]

LEAN_PRIOR = 4.0
"""Pseudo-draws of a judge with no agreement that each ``lambda_t``'s ridge starts from."""


@dataclass(frozen=True, slots=True)
class Rectified:
    """Labelled draws, one row per sample: ``w y`` and ``w f`` in draw order, and per row
    the judge's mean ``fbar``, ``max w f``, the least verdict and the largest weight;
    ``two_valued`` per row: every verdict of the run is 0 or 1 (not only the drawn ones)."""

    labels: FloatArray
    verdicts: FloatArray
    judge_mean: FloatArray
    top_weighted_verdict: FloatArray
    least_verdict: FloatArray
    weight_bound: float
    two_valued: npt.NDArray[np.bool_] | None = None


@dataclass(frozen=True, slots=True)
class _Terms:
    """Each draw's ``Z_t``, its range ``[low, high]`` and its bet before truncation."""

    values: FloatArray
    low: FloatArray
    high: FloatArray
    bets: FloatArray


def _before(values: FloatArray) -> FloatArray:
    """Sums over the columns before each column (0 for the first)."""
    summed = np.cumsum(values, axis=1)
    return np.concatenate((np.zeros((values.shape[0], 1)), summed[:, :-1]), axis=1)


def _centred_sums(
    a: FloatArray, b: FloatArray, count: FloatArray
) -> tuple[FloatArray, FloatArray, FloatArray]:
    """Centred sums of squares and products of ``a`` and ``b`` over the earlier columns."""
    sa, sb = _before(a), _before(b)
    safe = np.maximum(count, 1.0)
    saa = np.maximum(_before(a * a) - sa * sa / safe, 0.0)
    sbb = np.maximum(_before(b * b) - sb * sb / safe, 0.0)
    sab = _before(a * b) - sa * sb / safe
    return saa, sbb, sab


def _terms(
    draws: Rectified,
    alpha: float,
    horizon: int,
    tuning: BetTuning,
    fixed_lean: FloatArray | None = None,
) -> _Terms:
    """``lambda_t``, ``Z_t``, its range and the plug-in bet, each from the draws before ``t``."""
    labels, verdicts = draws.labels, draws.verdicts
    count = np.broadcast_to(np.arange(labels.shape[1], dtype=np.float64), labels.shape)
    saa, sff, saf = _centred_sums(labels, verdicts, count)
    # A ridge towards no lean: LEAN_PRIOR draws of a verdict that varies (variance 1/4)
    # and agrees with nothing.
    lean = np.clip(saf / (sff + LEAN_PRIOR * 0.25), 0.0, 1.0)
    if fixed_lean is not None:
        lean = np.broadcast_to(np.clip(fixed_lean, 0.0, 1.0)[:, None], labels.shape)
    fbar = draws.judge_mean[:, None]
    values = lean * fbar + labels - lean * verdicts
    low = lean * (fbar - draws.top_weighted_verdict[:, None])
    high = lean * fbar + draws.weight_bound * (1.0 - lean * draws.least_verdict[:, None])
    spread = np.maximum(saa - 2.0 * lean * saf + lean * lean * sff, 0.0)
    # The prior pseudo-observation of _bounded_mean: variance a quarter of the range squared.
    w = tuning.prior_weight
    variance = (w * 0.25 * (high - low) ** 2 + spread) / (count + w)
    bets = np.sqrt(2.0 * math.log(2.0 / alpha) / (max(horizon, 1) * variance))
    return _Terms(values, low, high, bets)


def _max_log_capital(
    terms: _Terms, rows: npt.NDArray[np.intp], m: FloatArray, sign: float, truncation: float
) -> FloatArray:
    """Per row: ``max_t log K_t^{sign}(m)``, bets truncated to keep each factor non-negative."""
    values, low, high = terms.values[rows], terms.low[rows], terms.high[rows]
    gap = (m[:, None] - low) if sign > 0 else (high - m[:, None])
    cap = np.full_like(gap, np.inf)
    with np.errstate(over="ignore"):
        np.divide(truncation, gap, out=cap, where=gap > 0.0)
    bets = np.minimum(terms.bets[rows], cap)
    factors = 1.0 + sign * bets * (values - m[:, None])
    with np.errstate(divide="ignore"):
        log_capital = np.cumsum(np.log(np.maximum(factors, 0.0)), axis=1)
    best: FloatArray = log_capital.max(axis=1)
    return best


def power_tuned_bounds(
    draws: Rectified, alpha: float, tuning: BetTuning, *, fixed_lean: FloatArray | None = None
) -> tuple[FloatArray, FloatArray, FloatArray]:
    """Per row: the interval's ends for the mean truth on ``[0, 1]``, and its estimate.

    The estimate is PPI++'s point (``lambda`` from all the draws), inside the interval.
    A row without draws gives ``[0, 1]``. ``fixed_lean``, one per row, is a lean chosen
    before any label (valid too, the same for every draw): the bench measures with it
    what learning the lean costs against knowing the best one in advance.
    """
    rows, n = draws.labels.shape
    if n == 0:
        return np.zeros(rows), np.ones(rows), np.full(rows, 0.5)
    terms = _terms(draws, alpha, n, tuning, fixed_lean)
    centre = np.clip(terms.values.mean(axis=1), 0.0, 1.0)
    threshold = math.log(2.0 / alpha)
    ends = []
    for sign, edge in ((1.0, np.zeros(rows)), (-1.0, np.ones(rows))):

        def capital(m: FloatArray, among: npt.NDArray[np.intp], sign: float = sign) -> FloatArray:
            return _max_log_capital(terms, among, m, sign, tuning.truncation)

        ends.append(confidence_set_end(capital, threshold, edge, centre))
    lower, upper = ends
    estimate = np.clip(_ppi_point(draws), lower, upper)
    return lower, upper, estimate


def _ppi_point(draws: Rectified) -> FloatArray:
    """``lambda fbar + mean(w y - lambda w f)`` with ``lambda`` from every draw."""
    labels, verdicts = draws.labels, draws.verdicts
    a = labels - labels.mean(axis=1, keepdims=True)
    f = verdicts - verdicts.mean(axis=1, keepdims=True)
    sff = (f * f).sum(axis=1)
    lean = np.clip((a * f).sum(axis=1) / (sff + LEAN_PRIOR * 0.25), 0.0, 1.0)
    point: FloatArray = lean * draws.judge_mean + (labels - lean[:, None] * verdicts).mean(axis=1)
    return point
