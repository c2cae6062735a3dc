"""A mean from many judge verdicts and a few people's labels, valid whatever the judge's bias.

Prediction-powered inference (Angelopoulos, Bates, Fannjiang, Jordan and Zrnic
(2023), "Prediction-powered inference", Science 382(6671), 669–674) writes the
mean of the truth ``y`` over the ``n`` observed cases as the judge's mean plus
the mean of the rectifier ``y - f`` (``_power_tuned`` weighs the judge by a learnt
``lambda`` instead of 1):

    ybar = fbar + rbar,   r_i = y_i - f_i.

``fbar`` is known exactly (every case has a verdict). ``rbar`` is estimated from
labelled draws. Here the draws follow the finite-sample variant with a known
sampling design (Zrnic and Candès (2024), "Active statistical inference", ICML,
with a betting interval in place of their normal approximation): each draw picks
case ``i`` with a recorded probability ``q_i`` (with replacement, independently
of the labels), and

    d_k = r_{I_k} / (n q_{I_k})

are i.i.d. with mean exactly ``rbar``. Every ``q_i`` is at least half the
uniform one (``oloproof_core.labels``), so the weights ``1 / (n q_i)`` have a bound
``B`` fixed before any label is seen. The interval (``_judge_or_labels``) does not
take ``lambda = 1`` as given: it leans on the judge by a ``lambda_t`` learnt from the
draws before each one (``_power_tuned``, a betting interval valid at every number
of labels), and for a pass/fail metric with uniform draws it keeps only what the
labels alone, exactly, also allow; from 100 such labels, with a judge that only
passes or fails, it is the exact interval within the judge's two verdicts instead
(``_verdict_strata``). Missing cases (no verdict, no label) may have any
truth, so the mean over all ``N`` cases is bounded by their worst and best
completions, as every other interval here (``_missing``).

What it covers: the mean truth over the run's ``N`` cases, the figure a team asks
of its test set. Nothing assumes the judge is right: a judge that errs gets less
weight as the labels show it, down to none for a coin; a judge that agrees with
people keeps the interval narrower than the labels alone (figures in
bench/README.md, "Labels: an interval that adapts to its judge").
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from ._bounded_mean import SCORE_TUNING, BetTuning
from ._interval import Interval
from ._judge_or_labels import by_verdict_rows, labelled_bounds
from ._power_tuned import Rectified
from ._validate import check_confidence, check_count

__all__ = ["RectifiedMean", "prediction_powered_interval"]


@dataclass(frozen=True, slots=True)
class RectifiedMean:
    """A prediction-powered figure on the unit scale.

    ``rectifier`` covers the mean of ``truth - judge`` over the observed cases:
    how far, and which way, the judge is off. ``by_verdict``: the interval is the
    exact one within the judge's two verdicts (``_verdict_strata``).
    """

    estimate: float
    interval: Interval
    rectifier: Interval
    n_draws: int
    by_verdict: bool = False


def prediction_powered_interval(
    judge: npt.ArrayLike,
    probabilities: npt.ArrayLike,
    drawn: Sequence[int] | npt.NDArray[np.int64],
    truth: npt.ArrayLike,
    n_missing: int,
    confidence: float = 0.95,
    *,
    tuning: BetTuning = SCORE_TUNING,
    exact_labels: bool = False,
) -> RectifiedMean:
    """Interval for the mean truth, from verdicts of every observed case and labelled draws.

    ``judge`` holds the verdict of each observed case on ``[0, 1]``; ``probabilities``
    each observed case's drawing probability (rescaled here to sum to one over the
    observed cases: draws that landed on a missing case are left out by the caller,
    which keeps the rest i.i.d.); ``drawn`` the index of each labelled draw's case,
    in draw order; ``truth`` the people's value of each draw on ``[0, 1]``. ``tuning``
    is the bets' (``_bounded_mean``); any keeps the guarantee, so it is chosen by the
    metric's kind before any label is seen (``oloproof_core.labels``), as is
    ``exact_labels`` (a pass/fail metric: ``_judge_or_labels``).
    """
    level = check_confidence(confidence)
    missing = check_count(n_missing, "n_missing")
    verdicts = _unit(judge, "judge")
    weights = _inverse_weights(probabilities, verdicts.size)
    labels = _unit(truth, "truth")
    index = np.asarray(drawn, dtype=np.int64).reshape(-1)
    if index.size != labels.size:
        raise ValueError(f"{index.size} draws but {labels.size} labels")
    if index.size and (index.min() < 0 or index.max() >= verdicts.size):
        raise ValueError("a draw names a case outside the observed cases")
    if verdicts.size == 0:
        return RectifiedMean(0.5, _with_missing(Interval(0.0, 1.0), 0, missing), _ANY, 0)
    judge_mean = float(verdicts.mean())
    draws = _rectified(verdicts, weights, index, labels)
    lower, upper, estimate = labelled_bounds(draws, 1.0 - level, tuning, exact_labels=exact_labels)
    observed = Interval(float(lower[0]), float(upper[0]))
    rectifier = Interval(observed.lower - judge_mean, observed.upper - judge_mean)
    interval = _with_missing(observed, verdicts.size, missing)
    by_verdict = bool(by_verdict_rows(draws, exact_labels=exact_labels)[0])
    return RectifiedMean(float(estimate[0]), interval, rectifier, int(index.size), by_verdict)


_ANY = Interval(-1.0, 1.0)


def _rectified(
    verdicts: npt.NDArray[np.float64],
    weights: npt.NDArray[np.float64],
    index: npt.NDArray[np.int64],
    labels: npt.NDArray[np.float64],
) -> Rectified:
    """One sample of draws as the interval reads them: weighted labels and verdicts."""
    weighted = weights * verdicts
    return Rectified(
        labels=(weights[index] * labels)[None, :],
        verdicts=weighted[index][None, :],
        judge_mean=np.array([verdicts.mean()]),
        top_weighted_verdict=np.array([weighted.max()]),
        least_verdict=np.array([verdicts.min()]),
        weight_bound=float(weights.max()),
        two_valued=np.array([bool(np.all((verdicts == 0.0) | (verdicts == 1.0)))]),
    )


def _with_missing(observed: Interval, n_observed: int, n_missing: int) -> Interval:
    """Bounds on the mean of all cases, the missing ones at their worst and at their best."""
    total = n_observed + n_missing
    if total == 0:
        return Interval(0.0, 1.0)
    low = n_observed * observed.lower / total
    return Interval(low, (n_observed * observed.upper + n_missing) / total)


def _inverse_weights(probabilities: npt.ArrayLike, n: int) -> npt.NDArray[np.float64]:
    """``1 / (n q_i)`` for each observed case, with the ``q_i`` rescaled to sum to one."""
    q = np.asarray(probabilities, dtype=np.float64).reshape(-1)
    if q.size != n:
        raise ValueError(f"{q.size} probabilities for {n} observed cases")
    if n == 0:
        return np.ones(0)
    if not np.all(np.isfinite(q)) or np.any(q <= 0.0):
        raise ValueError("every observed case needs a drawing probability above 0")
    if q.min() == q.max():
        # Uniform draws: each weight exactly 1, not 1 within rounding, so that the
        # labels stay the people's own values (what the exact member counts).
        return np.ones(n)
    weights: npt.NDArray[np.float64] = q.sum() / (n * q)
    return weights


def _unit(values: npt.ArrayLike, name: str) -> npt.NDArray[np.float64]:
    array = np.asarray(values, dtype=np.float64).reshape(-1)
    if array.size and not np.all((array >= 0.0) & (array <= 1.0)):
        raise ValueError(f"{name} values must lie in [0, 1]")
    return array
