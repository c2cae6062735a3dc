"""The labelled interval: the judge with a learnt lean, and pass/fail labels alone, exact.

A pass/fail metric with uniform draws, a judge whose every verdict is pass or fail
and at least ``BY_VERDICT_FROM`` labels gets the exact interval within the judge's two
verdicts (``_verdict_strata``), at the whole error rate. Otherwise: two valid
intervals for the mean truth of the observed cases, each at its own share
of the error rate, and their common part: it misses only when one of them does, so
its error is at most the sum of theirs (Bonferroni), for every judge and every
number of labels.

- the power-tuned betting interval (``_power_tuned``), which leans on the judge as far
  as the earlier labels show it agrees with people;
- with uniform draws of a pass/fail metric, Clopper–Pearson on the labels alone
  (Clopper and Pearson (1934), ``_clopper_pearson``): the best a coin of a judge can
  leave, and at 10 to 30 labels narrower than any betting interval on the same draws.

Why a split rather than betting alone: a betting interval on pass/fail labels is
about 1.2 times as wide as Clopper–Pearson's at any number of labels (its capital
is bounded by Markov's inequality, the exact interval by the binomial's own tails),
so a judge no better than a coin would cost a fifth of the width. With
``EXACT_SHARE`` of the error rate the exact member alone is at most 1.097 times its
full-rate width; the betting member keeps the rest (bench/README.md, "Labels: an
interval that adapts to its judge").

A label is a pass/fail metric's 0 or 1, or 1/2 where two people split: the exact
member counts such a label as a failure for its lower end and as a pass for its
upper end (each end is then Clopper–Pearson's for a proportion no larger, resp. no
smaller, than the mean truth), so it stays valid for any values in ``[0, 1]``.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from ._beta_quantile import beta_quantile
from ._bounded_mean import BetTuning
from ._power_tuned import Rectified, power_tuned_bounds
from ._verdict_strata import verdict_strata_bounds

__all__ = ["BY_VERDICT_FROM", "EXACT_SHARE", "by_verdict_rows", "labelled_bounds"]

FloatArray = npt.NDArray[np.float64]

EXACT_SHARE = 0.7
"""The exact labels-only member's share of the error rate, where it takes part.

The smallest share, in hundredths, that keeps Clopper–Pearson at that share within
1.1 times its full-rate width for every count of passes and every number of labels:
the ratio is largest at all passes (or none) as the labels grow, where it tends to
``log(2 / (share alpha)) / log(2 / alpha)``, 1.097 at 0.7 and 1.1006 at 0.69 for
``alpha = 0.05``. Every hundredth more is taken from the betting member, which a
judge that agrees with people needs."""


BY_VERDICT_FROM = 100
"""From this many labels on, a pass/fail judge's two verdicts split the labels
(``_verdict_strata``). With fewer, a verdict often holds one or two draws, and the
exact test, which must allow any share of passes there, was up to 1.8 times as wide
as Clopper–Pearson on the labels alone in single releases (1.08 at most from 100
labels, bench/README.md); the number of labels is fixed before any is seen, so
choosing by it keeps each interval exact."""


def labelled_bounds(
    draws: Rectified, alpha: float, tuning: BetTuning, *, exact_labels: bool
) -> tuple[FloatArray, FloatArray, FloatArray]:
    """Per row: the interval's ends for the mean truth on ``[0, 1]``, and its estimate.

    ``exact_labels`` says, before any label is seen, that the metric is pass/fail; the
    exact member takes part only then and with uniform draws (every weight 1).
    """
    if not (exact_labels and draws.weight_bound == 1.0):
        return power_tuned_bounds(draws, alpha, tuning)
    two_valued = by_verdict_rows(draws, exact_labels=exact_labels)
    if two_valued.all():
        return _by_verdict(draws, alpha)
    combined = _judge_and_exact(draws, alpha, tuning)
    if not two_valued.any():
        return combined
    by_verdict = _by_verdict(draws, alpha)
    lower, upper, estimate = (
        np.where(two_valued, mine, theirs)
        for mine, theirs in zip(by_verdict, combined, strict=True)
    )
    return lower, upper, estimate


def by_verdict_rows(draws: Rectified, *, exact_labels: bool) -> npt.NDArray[np.bool_]:
    """Per row, whether the interval is the one within the judge's two verdicts: a
    pass/fail metric, uniform draws, at least ``BY_VERDICT_FROM`` of them, and every
    verdict of the run pass or fail."""
    rows, labelled = draws.labels.shape
    if not exact_labels or draws.weight_bound != 1.0 or labelled < BY_VERDICT_FROM:
        return np.zeros(rows, dtype=bool)
    return np.zeros(rows, dtype=bool) if draws.two_valued is None else draws.two_valued


def _by_verdict(draws: Rectified, alpha: float) -> tuple[FloatArray, FloatArray, FloatArray]:
    """Per row, the exact interval within the judge's two verdicts (``_verdict_strata``)."""
    rows = [
        verdict_strata_bounds(labels, verdicts, float(share), alpha)
        for labels, verdicts, share in zip(
            draws.labels, draws.verdicts, draws.judge_mean, strict=True
        )
    ]
    found = np.array(rows, dtype=np.float64).reshape(-1, 3)
    return found[:, 0], found[:, 1], found[:, 2]


def _judge_and_exact(
    draws: Rectified, alpha: float, tuning: BetTuning
) -> tuple[FloatArray, FloatArray, FloatArray]:
    """The betting interval's and Clopper–Pearson's common part, the error rate split."""
    lower, upper, estimate = power_tuned_bounds(draws, alpha * (1.0 - EXACT_SHARE), tuning)
    exact_lower, exact_upper = _exact_bounds(draws.labels, alpha * EXACT_SHARE)
    lower, upper = np.maximum(lower, exact_lower), np.minimum(upper, exact_upper)
    # Should the two not meet, one of them has missed: the exact member's interval
    # is kept whole, which can only add coverage.
    apart = lower > upper
    lower, upper = np.where(apart, exact_lower, lower), np.where(apart, exact_upper, upper)
    return lower, upper, np.clip(estimate, lower, upper)


def _exact_bounds(labels: FloatArray, alpha: float) -> tuple[FloatArray, FloatArray]:
    """Clopper–Pearson per row, a split label a failure for the lower end, a pass for the upper."""
    n = labels.shape[1]
    passes = np.count_nonzero(labels >= 1.0, axis=1)
    not_failed = np.count_nonzero(labels > 0.0, axis=1)
    tail = alpha / 2.0
    low = {int(k): 0.0 if k == 0 else beta_quantile(tail, k, n - k + 1) for k in np.unique(passes)}
    high = {
        int(k): 1.0 if k == n else beta_quantile(1.0 - tail, k + 1, n - k)
        for k in np.unique(not_failed)
    }
    lower = np.array([low[int(k)] for k in passes], dtype=np.float64)
    upper = np.array([high[int(k)] for k in not_failed], dtype=np.float64)
    return lower, upper
