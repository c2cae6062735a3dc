"""Error control across many rules or many metrics.

- Holm, S. (1979). "A simple sequentially rejective multiple test procedure".
  Scandinavian Journal of Statistics 6(2), 65–70. Step-down: sort the p-values,
  reject the ``i``-th smallest (1-based) while ``p_(i) <= alpha / (k - i + 1)``.
  Controls the family-wise error rate at ``alpha`` under any dependence. It is
  valid for anytime-valid p-values too (``p_t = 1 / sup_s K_s``), at every look:
  Holm's proof needs only ``P(min over true nulls p_j <= alpha / k0) <= alpha``,
  which the union bound gives for the running suprema as well.
- Benjamini, Y. and Hochberg, Y. (1995). "Controlling the false discovery rate:
  a practical and powerful approach to multiple testing". JRSS-B 57(1),
  289–300. Adjusted p-values ``q_(i) = min_{j >= i} k p_(j) / j``; flagging
  ``q <= alpha`` controls the false discovery rate at ``alpha`` for independent
  or positively dependent (PRDS) p-values (Benjamini, Y. and Yekutieli, D.
  (2001), Annals of Statistics 29(4), 1165–1188), which covers metrics of two
  runs that move together.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

__all__ = ["benjamini_hochberg", "holm_rejections"]


def holm_rejections(p_values: Sequence[float], alpha: float) -> list[bool]:
    """Which hypotheses Holm's step-down procedure rejects at family-wise level ``alpha``."""
    p = np.asarray(p_values, dtype=np.float64)
    k = p.size
    rejected = [False] * k
    for rank, index in enumerate(np.argsort(p, kind="stable")):
        if p[index] > alpha / (k - rank):
            break
        rejected[int(index)] = True
    return rejected


def benjamini_hochberg(p_values: Sequence[float]) -> list[float]:
    """Benjamini–Hochberg adjusted p-values (q-values), in the given order."""
    p = np.asarray(p_values, dtype=np.float64)
    k = p.size
    if k == 0:
        return []
    order = np.argsort(p, kind="stable")
    scaled = p[order] * k / np.arange(1, k + 1)
    adjusted = np.minimum(1.0, np.minimum.accumulate(scaled[::-1])[::-1])
    q = np.empty(k)
    q[order] = adjusted
    return [float(value) for value in q]
