"""How many cases a rule needs to pass with a stated probability (power) at a stated effect.

Betting intervals (scores, paired differences, sequential gates). For bets tuned
to ``n`` cases the hedged capital's log grows like ``lambda * n * (mean - m) -
lambda^2 * n * sigma^2 / 2``, and the interval's end sits where it reaches
``log(2 / alpha)``; with the plug-in bet this puts the end at
``mean -/+ sigma * sqrt(2 log(2 / alpha) / n)`` (Waudby-Smith & Ramdas 2024,
§5.1: the width of the betting interval is asymptotically that of a normal
interval with ``z`` replaced by ``sqrt(2 log(2 / alpha))``). A rule at distance
``delta`` passes when the sample mean lands more than that half-width beyond the
threshold; the sample mean being approximately normal with sd ``sigma / sqrt(n)``,
the power is ``Phi(delta sqrt(n) / sigma - sqrt(2 log(2 / alpha)))``, hence::

    n = ((sqrt(2 log(2 / alpha)) + z_power) * sigma / delta)^2

rounded up. This is the usual sample-size formula (e.g. Julious, S. A. (2010),
*Sample Sizes for Clinical Trials*, ch. 3) with the betting interval's constant
in place of ``z_{1 - alpha/2}``; bench/README.md checks it by simulation.

Pass/fail rates (Clopper–Pearson). Exact: the rule ``min: t`` passes with ``k``
successes of ``n`` exactly when the exact lower limit clears ``t``, i.e. when
``k >= k_n`` with ``k_n`` the smallest count whose one-sided binomial tail at
``t`` is at most ``alpha / 2``; the power at a true rate ``p`` is
``P(Bin(n, p) >= k_n)``. The smallest ``n`` with that power is found by
scanning (the exact power saw-tooths in ``n``, so the answer is the first ``n``
that reaches it, starting the scan at 4/5 of the normal-approximation answer and
going on as far as needed: near rates of 0 or 1 the normal answer can be several
times too small; beyond 50,000 cases the normal answer itself is used).
"""

from __future__ import annotations

import math

import numpy as np

from ._validate import check_confidence

__all__ = ["POWER", "betting_cases_for_power", "proportion_cases_for_power"]

POWER = 0.8
_LIMIT = 10_000_000
_EXACT_UP_TO = 50_000


def betting_cases_for_power(
    sd: float, effect: float, confidence: float = 0.95, power: float = POWER
) -> int | None:
    """Cases for a betting-interval rule to pass with probability ``power`` (formula above).

    ``sd`` is the spread of one case's value (or paired difference), ``effect``
    the distance of the truth from the threshold, both in the metric's units.
    None when the effect is 0 (no number of cases) or the answer exceeds ten
    million.
    """
    from scipy.stats import norm  # scipy.stats only when this method runs

    level = check_confidence(confidence)
    if not 0.0 < power < 1.0:
        raise ValueError(f"power must be strictly between 0 and 1, got {power!r}")
    if effect == 0.0 or not math.isfinite(effect):
        return None
    spread = max(float(sd), 1e-12)
    constant = math.sqrt(2.0 * math.log(2.0 / (1.0 - level))) + float(norm.ppf(power))
    n = math.ceil((constant * spread / abs(effect)) ** 2)
    return None if n > _LIMIT else max(n, 1)


def proportion_cases_for_power(
    rate: float, threshold: float, confidence: float = 0.95, power: float = POWER
) -> int | None:
    """Cases for the exact interval at a true ``rate`` to clear ``threshold`` with ``power``.

    ``rate > threshold`` plans a ``min`` rule (the lower limit must clear it),
    ``rate < threshold`` a ``max`` rule. None when they are equal or beyond ten
    million cases.
    """
    level = check_confidence(confidence)
    if rate == threshold:
        return None
    from scipy.stats import binom, norm  # scipy.stats only when this method runs

    if rate < threshold:
        return proportion_cases_for_power(1.0 - rate, 1.0 - threshold, level, power)
    tail = (1.0 - level) / 2.0
    effect = rate - threshold
    z = float(norm.ppf(1.0 - tail)) + float(norm.ppf(power))
    guess = math.ceil((z * math.sqrt(rate * (1.0 - rate)) / effect) ** 2)
    if guess > _EXACT_UP_TO:
        # The exact power is the normal one to well within a case at this size.
        return None if guess > _LIMIT else guess
    start = max(1, (4 * guess) // 5)
    chunk = max(64, guess // 8)
    # Near rates of 0 or 1 the normal answer can be several times too small, so the
    # scan goes on (in growing chunks) until the exact power is reached.
    while start <= _EXACT_UP_TO:
        n = np.arange(start, start + chunk)
        # k_n: smallest k with P(X >= k | threshold) <= tail.
        k_needed = binom.isf(tail, n, threshold) + 1
        reached = binom.sf(k_needed - 1, n, rate) >= power
        if reached.any():
            return int(n[np.argmax(reached)])
        start, chunk = int(n[-1]) + 1, 2 * chunk
    return guess
