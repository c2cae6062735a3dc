"""How many more cases would make an inconclusive rule conclusive.

A gate rule is inconclusive while the interval straddles the threshold
(SPEC §1.5). Assuming the observed rate holds, the question is the smallest
total ``N`` at which the exact (Clopper–Pearson) interval for ``rate * N``
successes out of ``N`` excludes the threshold. The success count is kept
fractional, through the beta-quantile form of the interval, so the bound
moves smoothly and monotonically with ``N`` and can be bisected (the
integer version jitters with rounding). This is the precision-based sample
size of e.g. Julious, S. A. (2010), *Sample Sizes for Clinical Trials*,
ch. 14, with the exact interval in place of the normal one.

For ``kind="mean"`` the scores are treated as the highest-variance
distribution with that mean on the range, two-point at its ends, so the
answer is an upper estimate for scores that vary less.
"""

from __future__ import annotations

import math
from typing import Literal

from ._beta_quantile import beta_quantile
from ._validate import check_confidence, check_count

__all__ = ["MAX_CASES", "cases_needed"]

# Beyond ten million cases a rule is in practice undecidable; returning
# None tells the caller so instead of quoting an absurd figure.
MAX_CASES = 10_000_000


def _conclusive(rate: float, threshold: float, n: int, tail: float) -> bool:
    successes = rate * n
    if rate > threshold:
        return beta_quantile(tail, successes, n - successes + 1.0) > threshold
    return beta_quantile(1.0 - tail, successes + 1.0, n - successes) < threshold


def cases_needed(
    observed_rate: float,
    threshold: float,
    n_current: int,
    confidence: float = 0.95,
    kind: Literal["proportion", "mean"] = "proportion",
    *,
    low: float = 0.0,
    high: float = 1.0,
) -> int | None:
    """Additional cases (beyond ``n_current``) for the interval to clear ``threshold``.

    Returns 0 when the interval at ``n_current`` already excludes the
    threshold, ``None`` when it never will (the rate equals the threshold)
    or would need more than :data:`MAX_CASES` cases in total. ``low`` and
    ``high`` give the score range for ``kind="mean"``; proportions use
    ``[0, 1]``.
    """
    level = check_confidence(confidence)
    current = check_count(n_current, "n_current")
    if kind not in ("proportion", "mean"):
        raise ValueError(f"kind must be 'proportion' or 'mean', got {kind!r}")
    lo, hi = (0.0, 1.0) if kind == "proportion" else (float(low), float(high))
    if not (math.isfinite(lo) and math.isfinite(hi) and lo < hi):
        raise ValueError(f"range must satisfy low < high, got ({low!r}, {high!r})")
    for name, value in (("observed_rate", observed_rate), ("threshold", threshold)):
        if not lo <= float(value) <= hi:
            raise ValueError(f"{name}={value!r} is outside [{lo!r}, {hi!r}]")
    rate = (float(observed_rate) - lo) / (hi - lo)
    target = (float(threshold) - lo) / (hi - lo)
    if rate == target:
        return None
    tail = (1.0 - level) / 2.0
    start = max(current, 1)
    if _conclusive(rate, target, start, tail):
        return max(0, start - current)
    # Doubling finds a bracket (not conclusive, conclusive], bisection the edge.
    below, above = start, start
    while not _conclusive(rate, target, above, tail):
        if above >= MAX_CASES:
            return None
        below, above = above, min(2 * above, MAX_CASES)
    while above - below > 1:
        middle = (below + above) // 2
        if _conclusive(rate, target, middle, tail):
            above = middle
        else:
            below = middle
    return above - current
