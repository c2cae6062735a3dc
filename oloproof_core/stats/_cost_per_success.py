"""Interval for the cost per successful case: total cost over the number of successes.

Over ``n`` cases the figure is ``(Σ costᵢ) / (Σ successᵢ)``, which estimates the
ratio ``μ / p`` of the mean cost per case to the success rate. Its interval
combines an interval for each at the level ``1 − α/2`` (Bonferroni): the upper
end ``U_μ / L_p`` is below the truth only if ``μ > U_μ`` or ``p < L_p``, each at
most ``α/4`` by its own interval, so at most ``α/2`` in all, and likewise the
lower end ``L_μ / U_p``. No independence between the two figures is assumed:
they are read from the same cases. A success rate whose lower end is 0 leaves
the upper end infinite (no success yet bounds nothing).

The mean cost's interval is ``_nonnegative_mean`` (it needs a stated cap for a
finite upper end); the success rate's is Clopper–Pearson with the missing
verdicts bounded by their completions (``_missing_proportion``).
"""

from __future__ import annotations

import math

from ._interval import Interval
from ._validate import check_confidence

__all__ = ["ratio_interval", "split_level"]


def split_level(confidence: float) -> float:
    """The level of each of the two intervals a ratio's interval at ``confidence`` needs."""
    return 1.0 - (1.0 - check_confidence(confidence)) / 2.0


def ratio_interval(cost: Interval, success_rate: Interval) -> Interval:
    """``[L_μ / U_p, U_μ / L_p]`` from the two intervals, each at ``split_level``."""
    lower = 0.0 if success_rate.upper <= 0 else cost.lower / success_rate.upper
    upper = math.inf if success_rate.lower <= 0 else cost.upper / success_rate.lower
    return Interval(lower, upper)
