"""The pass rate's interval with its missing verdicts bounded, not dropped.

The reasoning, and the interval for scores, are in ``_missing``; this one is kept
apart because it needs only the exact Clopper–Pearson limits, so that a pass/fail run
loads neither NumPy nor SciPy.
"""

from __future__ import annotations

from ._clopper_pearson import clopper_pearson
from ._interval import Interval
from ._validate import check_count

__all__ = ["proportion_interval"]


def proportion_interval(
    successes: int, n_observed: int, n_missing: int, confidence: float = 0.95
) -> Interval:
    """Clopper–Pearson interval for a pass rate with ``n_missing`` unknown verdicts.

    Lower end: the exact lower bound for ``successes`` out of
    ``n_observed + n_missing`` (every missing case a failure). Upper end: the
    exact upper bound for ``successes + n_missing`` out of the same total
    (every missing case a success). With nothing missing this is the plain
    Clopper–Pearson interval; with nothing observed it is ``[0, 1]``.
    """
    k = check_count(successes, "successes")
    observed = check_count(n_observed, "n_observed")
    missing = check_count(n_missing, "n_missing")
    if k > observed:
        raise ValueError(f"successes={k} exceeds n_observed={observed}")
    total = observed + missing
    lower = clopper_pearson(k, total, confidence).lower
    upper = clopper_pearson(k + missing, total, confidence).upper
    return Interval(lower, upper)
