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

Missing entries are bounded, not dropped: the lower end uses every
incomplete pair at its worst (baseline at the top of the range, candidate
at the bottom), the upper end at its best. Missing entries stay at their
own position in the sequence, so one pair going missing changes one
difference to its extreme. Why this keeps coverage for every completion is
set out in ``_missing``.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from scipy.stats import binomtest

from ._bounded_mean import betting_p_value, bounded_mean_bounds
from ._difference import PairedDifference
from ._interval import Interval
from ._pairs import Pairs, read_scores, read_verdicts
from ._validate import check_confidence

__all__ = ["mcnemar_exact_p_value", "paired_mean_difference", "paired_proportion_difference"]

_PROPORTION_METHOD = (
    "paired difference of pass rates (b - a): Waudby-Smith-Ramdas betting interval on "
    "per-case differences, finite-sample valid; p-value: exact McNemar (two-sided binomial "
    "test on discordant pairs), largest over completions of missing verdicts; missing "
    "verdicts bounded by worst/best completion"
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
    discordant = n_improved + n_regressed
    if discordant == 0:
        return 1.0
    return float(binomtest(n_improved, discordant, 0.5).pvalue)


def _largest_mcnemar_p_value(
    n_improved: int, n_regressed: int, can_improve: int, can_regress: int, either: int
) -> float:
    """Largest exact McNemar p-value over completions of the missing verdicts.

    ``can_improve`` incomplete pairs could turn out improved or concordant,
    ``can_regress`` regressed or concordant, ``either`` (both sides missing)
    any of the three. The two-sided binomial p-value grows with the smaller
    discordant count and shrinks with the larger one (adding a trial to the
    smaller side can only raise its tail probability), so the maximum puts
    every available pair on the smaller side; once the sides can be
    balanced the p-value is 1.
    """
    if n_improved >= n_regressed:
        room = can_regress + either
        gap = n_improved - n_regressed
        if room >= gap - 1:
            return 1.0
        return mcnemar_exact_p_value(n_improved, n_regressed + room)
    room = can_improve + either
    gap = n_regressed - n_improved
    if room >= gap - 1:
        return 1.0
    return mcnemar_exact_p_value(n_improved + room, n_regressed)


def _difference_interval(pairs: Pairs, confidence: float) -> Interval:
    """Betting interval for the mean difference, missing bounded by extreme completions."""
    if pairs.a.size == 0:
        return Interval(-pairs.span, pairs.span)
    worst = pairs.unit_differences(best=False)
    best = pairs.unit_differences(best=True)
    bounds = bounded_mean_bounds(np.vstack((worst, best)), confidence)
    lower_unit, upper_unit = float(bounds[0, 0]), float(bounds[1, 1])
    span = pairs.span
    lower = -span if lower_unit <= 0.0 else max(-span, span * (2.0 * lower_unit - 1.0))
    upper = span if upper_unit >= 1.0 else min(span, span * (2.0 * upper_unit - 1.0))
    return Interval(lower, upper)


def _estimates(pairs: Pairs) -> tuple[float | None, float | None, float | None]:
    complete = pairs.complete
    if not complete.any():
        return None, None, None
    a = pairs.a[complete]
    b = pairs.b[complete]
    return float(a.mean()), float(b.mean()), float((b - a).mean())


def paired_proportion_difference(
    a: Sequence[bool | None], b: Sequence[bool | None], confidence: float = 0.95
) -> PairedDifference:
    """Difference in pass rate ``rate_b - rate_a`` over the same cases.

    ``a`` is the baseline, ``b`` the candidate, aligned by index; ``None``
    marks a missing verdict. Estimates use the complete pairs; the interval
    bounds the incomplete ones (lower end: ``b`` missing counted as fail and
    ``a`` missing as pass; upper end the reverse).
    """
    level = check_confidence(confidence)
    pairs = read_verdicts(a, b)
    complete = pairs.complete
    a_pass = pairs.a == 1.0
    b_pass = pairs.b == 1.0
    improved = int(np.sum(complete & ~a_pass & b_pass))
    regressed = int(np.sum(complete & a_pass & ~b_pass))
    only_a_missing = pairs.a_missing & ~pairs.b_missing
    only_b_missing = pairs.b_missing & ~pairs.a_missing
    # A missing baseline next to a passing candidate can only be an
    # improvement or a tie; the other one-sided cases follow the same logic.
    can_improve = int(np.sum(only_a_missing & b_pass) + np.sum(only_b_missing & ~a_pass))
    can_regress = int(np.sum(only_a_missing & ~b_pass) + np.sum(only_b_missing & a_pass))
    either = int(np.sum(pairs.a_missing & pairs.b_missing))
    estimate_a, estimate_b, difference = _estimates(pairs)
    return PairedDifference(
        estimate_a=estimate_a,
        estimate_b=estimate_b,
        difference=difference,
        interval=_difference_interval(pairs, level),
        p_value=_largest_mcnemar_p_value(improved, regressed, can_improve, can_regress, either),
        n_pairs=int(complete.sum()),
        n_missing=int((~complete).sum()),
        method=_PROPORTION_METHOD,
        confidence=level,
        n_improved=improved,
        n_regressed=regressed,
    )


def paired_mean_difference(
    a: Sequence[float | None],
    b: Sequence[float | None],
    low: float,
    high: float,
    confidence: float = 0.95,
) -> PairedDifference:
    """Difference in mean score ``mean_b - mean_a`` for scores in ``[low, high]``.

    Differences lie in ``[-(high - low), high - low]``. The p-value is the
    betting test of zero difference on the same capital as the interval, so
    ``p_value <= 1 - confidence`` exactly when the interval excludes 0; with
    missing scores it is the largest over the worst and best completions.
    """
    level = check_confidence(confidence)
    pairs = read_scores(a, b, low, high)
    estimate_a, estimate_b, difference = _estimates(pairs)
    p_value = (
        betting_p_value(pairs.unit_differences(False), pairs.unit_differences(True), 0.5, level)
        if pairs.a.size
        else 1.0
    )
    complete = pairs.complete
    return PairedDifference(
        estimate_a=estimate_a,
        estimate_b=estimate_b,
        difference=difference,
        interval=_difference_interval(pairs, level),
        p_value=p_value,
        n_pairs=int(complete.sum()),
        n_missing=int((~complete).sum()),
        method=_MEAN_METHOD,
        confidence=level,
    )
