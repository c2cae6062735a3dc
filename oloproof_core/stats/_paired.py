"""Paired comparison of two runs on the same cases (candidate ``b`` against baseline ``a``).

Pairing removes the between-case variation that dominates evaluation
noise: Miller, E. (2024). "Adding Error Bars to Evals: A Statistical
Approach to Language Model Evaluations", arXiv:2411.00640, §4 ("paired
differences").

Interval: the per-case differences ``d = b - a`` lie in ``[-span, span]``;
rescaled to ``[0, 1]`` they get the finite-sample valid betting interval of
Waudby-Smith & Ramdas (2024) (see ``_bounded_mean``). For pass/fail the
differences take the values -1, 0, 1 and the interval is driven by the
discordant pairs. This was chosen over the exact conditional interval
(Clopper–Pearson on the discordant share combined with Clopper–Pearson on
the discordance rate, Bonferroni-split) because both guarantee coverage
but the betting interval was narrower, mostly by 10–30 %, in the
simulations recorded in bench/README.md (the exception, up to 5 % wider,
being a very rare kind of discordant pair at n <= 30), and over Tango's
score interval (Tango, T. (1998),
Statistics in Medicine 17, 891–908) because that is asymptotic and its
coverage dips below nominal at small ``n`` (Fagerland, Lydersen & Laake
(2014), Statistics in Medicine 33, 2850–2875).

Interval and p-value come from one procedure: the p-value is the betting test
of zero difference on the same capital, the same bets and the same (canonical)
order as the interval, so ``p <= 1 - confidence`` exactly when the interval
excludes 0 and a row never shows a "significant" p-value beside an interval
that contains 0, or the reverse. (The exact McNemar test, still available as
``mcnemar_exact_p_value``, is a different procedure: beside the betting
interval it disagreed in both directions.) The bets use ``DIFFERENCE_TUNING``
(see ``_bounded_mean``): paired differences cluster near zero.

Missing entries are bounded, not dropped: the lower end uses every
incomplete pair at its worst (baseline at the top of the range, candidate
at the bottom), the upper end at its best. Each completion is read in its own
canonical order (``_order``). Why this keeps coverage for every completion is
set out in ``_missing``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from ._bounded_mean import (
    DIFFERENCE_TUNING,
    SCORE_TUNING,
    BetTuning,
    FloatArray,
    Sample,
)
from ._difference import PairedDifference
from ._interval import Interval
from ._order import Keys, ReadOrder
from ._pairs import Pairs, pairs_from_arrays, read_scores, read_verdicts
from ._validate import check_confidence

__all__ = ["mcnemar_exact_p_value", "paired_mean_difference", "paired_proportion_difference"]

_PROPORTION_METHOD = (
    "paired difference of pass rates (b - a): Waudby-Smith-Ramdas betting interval on "
    "per-case differences, finite-sample valid; p-value: betting test of zero difference "
    "on the same capital (agrees with the interval); missing verdicts bounded by "
    "worst/best completion"
)
_MEAN_METHOD = (
    "paired difference of mean scores (b - a): Waudby-Smith-Ramdas betting interval on "
    "per-case differences, finite-sample valid; p-value: betting test of zero difference "
    "(agrees with the interval); missing scores bounded by worst/best completion"
)


def mcnemar_exact_p_value(n_improved: int, n_regressed: int) -> float:
    """Exact McNemar test: two-sided binomial test of the discordant pairs at 1/2.

    McNemar, Q. (1947). "Note on the sampling error of the difference between
    correlated proportions or percentages". Psychometrika 12(2), 153–157; the
    exact (binomial) form is e.g. Agresti, *Categorical Data Analysis*, 3rd
    ed., §11.1.1. No discordant pair gives 1.
    """
    from scipy.stats import binomtest  # scipy.stats only when this method runs

    discordant = n_improved + n_regressed
    if discordant == 0:
        return 1.0
    return float(binomtest(n_improved, discordant, 0.5).pvalue)


def _difference_figures(
    pairs: Pairs, confidence: float, tuning: BetTuning, keys: Keys
) -> tuple[Interval, float]:
    """Betting interval for the mean difference and the test of zero on the same capital.

    Missing pairs are bounded by the extreme completions: the lower end and the
    evidence of an improvement come from the worst, the upper end and the evidence
    of a regression from the best. Each completion is ordered and bet on once.
    """
    span = pairs.span
    if pairs.a.size == 0:
        return Interval(-span, span), 1.0
    alpha = 1.0 - confidence
    order = None if keys is None else ReadOrder.of(keys)
    worst = Sample.of(pairs.unit_differences(best=False), alpha, tuning, order)
    best = Sample.of(pairs.unit_differences(best=True), alpha, tuning, order)
    threshold = math.log(2.0 / alpha)
    lower_unit, upper_unit = worst.end(1.0, threshold), best.end(-1.0, threshold)
    lower = -span if lower_unit <= 0.0 else max(-span, span * (2.0 * lower_unit - 1.0))
    upper = span if upper_unit >= 1.0 else min(span, span * (2.0 * upper_unit - 1.0))
    sides = (worst.log_capital(0.5, 1.0), best.log_capital(0.5, -1.0))
    p_above, p_below = (min(1.0, math.exp(-max(side, 0.0))) for side in sides)
    return Interval(lower, upper), min(1.0, 2.0 * min(p_above, p_below))


_MIXED = "give both runs as float arrays (NaN: missing) or both as lists (None: missing)"


def _verdict_arrays(a: FloatArray, b: FloatArray) -> Pairs:
    pairs = pairs_from_arrays(a, b, 0.0, 1.0)
    for values, name in ((pairs.a, "a"), (pairs.b, "b")):
        odd = np.flatnonzero(~np.isnan(values) & (values != 0.0) & (values != 1.0))
        if odd.size:
            raise ValueError(
                f"{name}[{int(odd[0])}] = {float(values[odd[0]])!r}: a verdict array holds "
                "1.0 (pass), 0.0 (fail) or NaN (missing)"
            )
    return pairs


def _estimates(pairs: Pairs) -> tuple[float | None, float | None, float | None]:
    complete = pairs.complete
    if not complete.any():
        return None, None, None
    a = pairs.a[complete]
    b = pairs.b[complete]
    return float(a.mean()), float(b.mean()), float((b - a).mean())


def paired_proportion_difference(
    a: Sequence[bool | None] | FloatArray,
    b: Sequence[bool | None] | FloatArray,
    confidence: float = 0.95,
    *,
    keys: Keys = None,
) -> PairedDifference:
    """Difference in pass rate ``rate_b - rate_a`` over the same cases.

    ``a`` is the baseline, ``b`` the candidate, aligned by index; ``None``
    marks a missing verdict. Estimates use the complete pairs; the interval
    bounds the incomplete ones (lower end: ``b`` missing counted as fail and
    ``a`` missing as pass; upper end the reverse). ``keys`` (the cases' ids)
    fix the reading order, so the same cases in any order give the same
    figures (``_order``). Float arrays of 1.0 (pass), 0.0 (fail) and NaN
    (missing) may be given instead of lists.
    """
    level = check_confidence(confidence)
    if isinstance(a, np.ndarray) and isinstance(b, np.ndarray):
        pairs = _verdict_arrays(a, b)
    elif isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        raise TypeError(_MIXED)
    else:
        pairs = read_verdicts(a, b)
    complete = pairs.complete
    a_pass = pairs.a == 1.0
    b_pass = pairs.b == 1.0
    estimate_a, estimate_b, difference = _estimates(pairs)
    interval, p_value = _difference_figures(pairs, level, SCORE_TUNING, keys)
    return PairedDifference(
        estimate_a=estimate_a,
        estimate_b=estimate_b,
        difference=difference,
        interval=interval,
        p_value=p_value,
        n_pairs=int(complete.sum()),
        n_missing=int((~complete).sum()),
        method=_PROPORTION_METHOD,
        confidence=level,
        n_improved=int(np.sum(complete & ~a_pass & b_pass)),
        n_regressed=int(np.sum(complete & a_pass & ~b_pass)),
    )


def paired_mean_difference(
    a: Sequence[float | None] | FloatArray,
    b: Sequence[float | None] | FloatArray,
    low: float,
    high: float,
    confidence: float = 0.95,
    *,
    keys: Keys = None,
) -> PairedDifference:
    """Difference in mean score ``mean_b - mean_a`` for scores in ``[low, high]``.

    Differences lie in ``[-(high - low), high - low]``. The p-value is the
    betting test of zero difference on the same capital as the interval, so
    ``p_value <= 1 - confidence`` exactly when the interval excludes 0; with
    missing scores it is the largest over the worst and best completions.
    ``keys`` as for :func:`paired_proportion_difference`; float arrays, NaN
    marking a missing score, may be given instead of lists.
    """
    level = check_confidence(confidence)
    if isinstance(a, np.ndarray) and isinstance(b, np.ndarray):
        pairs = pairs_from_arrays(a, b, low, high)
    elif isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        raise TypeError(_MIXED)
    else:
        pairs = read_scores(a, b, low, high)
    estimate_a, estimate_b, difference = _estimates(pairs)
    complete = pairs.complete
    interval, p_value = _difference_figures(pairs, level, DIFFERENCE_TUNING, keys)
    return PairedDifference(
        estimate_a=estimate_a,
        estimate_b=estimate_b,
        difference=difference,
        interval=interval,
        p_value=p_value,
        n_pairs=int(complete.sum()),
        n_missing=int((~complete).sum()),
        method=_MEAN_METHOD,
        confidence=level,
    )
