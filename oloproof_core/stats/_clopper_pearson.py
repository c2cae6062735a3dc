"""Exact (Clopper–Pearson) confidence interval for a binomial proportion.

Clopper, C. J. and Pearson, E. S. (1934). "The use of confidence or fiducial
limits illustrated in the case of the binomial". Biometrika 26(4), 404–413.
The beta-quantile form used here is the standard identity between binomial
tail sums and the incomplete beta function (e.g. Agresti, *Categorical Data
Analysis*, 3rd ed., §1.4.2).
"""

from __future__ import annotations

from ._beta_quantile import beta_quantile
from ._interval import Interval
from ._validate import check_confidence, check_count

__all__ = ["clopper_pearson"]


def clopper_pearson(successes: int, n: int, confidence: float = 0.95) -> Interval:
    """Exact two-sided interval for a proportion from ``successes`` out of ``n``.

    Each tail gets ``(1 - confidence) / 2``. The interval is conservative:
    its coverage is at least ``confidence`` for every true proportion.

    ``n == 0`` gives ``[0, 1]`` (nothing observed, nothing excluded). With no
    successes the lower end is exactly ``0.0``, with no failures the upper end
    is exactly ``1.0``: the beta quantile is undefined there and the one-sided
    bound is the natural limit.
    """
    k = check_count(successes, "successes")
    total = check_count(n, "n")
    level = check_confidence(confidence)
    if k > total:
        raise ValueError(f"successes={k} exceeds n={total}")
    if total == 0:
        return Interval(0.0, 1.0)
    tail = (1.0 - level) / 2.0
    lower = 0.0 if k == 0 else beta_quantile(tail, k, total - k + 1)
    upper = 1.0 if k == total else beta_quantile(1.0 - tail, k + 1, total - k)
    return Interval(lower, upper)
