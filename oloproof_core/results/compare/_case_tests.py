"""Exact tests of one case's change between two runs' repeats, and their control across cases.

- Pass/fail: Fisher's exact test on the 2×2 table of passes and fails, two-sided
  (Fisher, R. A. (1935), "The logic of inductive inference", JRSS 98(1), 39–82;
  Agresti, A. (2002), *Categorical Data Analysis*, §3.5.1): conditional on the table's
  margins, the baseline's passes are hypergeometric when both sides pass with the same
  chance; the p-value sums the probabilities of the tables no more likely than the one
  seen. Computed on whole numbers (`math.comb`), so ties are exact.
- Scores: the exact two-sample permutation test of the difference of the means
  (Good, P. (2005), *Permutation, Parametric and Bootstrap Tests of Hypotheses*, §3):
  every split of the pooled repeat values into the two sides' sizes, enumerated up to
  `EXACT_SPLITS`; past that, `RANDOM_SPLITS` random splits with p = (1 + b) / (1 + B)
  (Phipson, B. and Smyth, G. K. (2010), "Permutation p-values should never be zero",
  SAGMB 9(1)), which is valid too. The draws are seeded by the values, so the figures
  are a function of the data.
- Across cases: Tarone's rule, then Holm's step-down (Tarone, R. E. (1990), "A modified
  Bonferroni method for discrete data", Biometrics 46(2), 515–522; Holm, S. (1979),
  Scand. J. Statist. 6(2), 65–70). Both tests are conditional on what every case's
  margins (or pooled values) are, and a case whose smallest reachable p-value lies above
  α/K can never be rejected at α/K; Tarone takes the smallest K such that at most K
  cases can reach α/K, and Holm runs over those cases only. The set depends on the
  margins alone, so the family-wise error across the cases stays at most α, while the
  many cases that could not move (passed or failed every repeat on both sides) cost
  nothing.
"""

from __future__ import annotations

import bisect
import zlib
from collections.abc import Sequence
from functools import lru_cache
from itertools import combinations
from math import comb

import numpy as np

EXACT_SPLITS = 20_000
"""Splits of the pooled values enumerated exactly; more are drawn at random."""
RANDOM_SPLITS = 9_999
_RELATIVE_TIE = 1e-9
"""Differences of means closer than this (relative) count as equal: floating sums of the
same values in another order differ in the last bits."""


@lru_cache(maxsize=65_536)
def fisher_two_sided(
    passes_a: int, tries_a: int, passes_b: int, tries_b: int
) -> tuple[float, float]:
    """Fisher's exact two-sided p-value for passes_a/tries_a against passes_b/tries_b, and
    the smallest p-value any table with the same margins could give."""
    total = passes_a + passes_b
    low, high = max(0, total - tries_b), min(tries_a, total)
    weights = [comb(tries_a, a) * comb(tries_b, total - a) for a in range(low, high + 1)]
    whole = comb(tries_a + tries_b, total)
    observed = weights[passes_a - low]
    p_value = sum(weight for weight in weights if weight <= observed) / whole
    least = min(weights)
    smallest = sum(weight for weight in weights if weight <= least) / whole
    return min(1.0, p_value), min(1.0, smallest)


def permutation_two_sided(
    baseline: Sequence[float], candidate: Sequence[float]
) -> tuple[float, float]:
    """Permutation p-value for a change of the mean between two sides' repeat values, and
    the smallest p-value a split of the same pooled values could give (a lower bound when
    the splits are drawn)."""
    pooled = np.asarray([*baseline, *candidate], dtype=np.float64)
    size = len(candidate)
    if np.ptp(pooled) == 0.0:
        return 1.0, 1.0
    splits = comb(pooled.size, size)
    if splits <= EXACT_SPLITS:
        chosen = np.fromiter(
            (i for split in combinations(range(pooled.size), size) for i in split),
            dtype=np.intp,
            count=splits * size,
        ).reshape(splits, size)
        distances = _distances(pooled, chosen)
        seen = _distances(pooled, np.arange(len(baseline), pooled.size)[None, :])[0]
        tie = _RELATIVE_TIE * max(1.0, float(np.abs(pooled).max()))
        p_value = float(np.count_nonzero(distances >= seen - tie)) / splits
        smallest = float(np.count_nonzero(distances >= distances.max() - tie)) / splits
        return p_value, smallest
    seed = zlib.crc32(np.sort(pooled).tobytes() + size.to_bytes(4, "little"))
    rng = np.random.default_rng(seed)
    chosen = np.argsort(rng.random((RANDOM_SPLITS, pooled.size)), axis=1)[:, :size]
    distances = _distances(pooled, chosen)
    seen = _distances(pooled, np.arange(len(baseline), pooled.size)[None, :])[0]
    tie = _RELATIVE_TIE * max(1.0, float(np.abs(pooled).max()))
    beyond = int(np.count_nonzero(distances >= seen - tie))
    return (1 + beyond) / (1 + RANDOM_SPLITS), 1 / (1 + RANDOM_SPLITS)


def _distances(pooled: np.ndarray, chosen: np.ndarray) -> np.ndarray:
    """|mean of the chosen − mean of the rest| for each row of chosen positions."""
    size, rest = chosen.shape[1], pooled.size - chosen.shape[1]
    picked = pooled[chosen].sum(axis=1)
    result: np.ndarray = np.abs(picked / size - (pooled.sum() - picked) / rest)
    return result


def tarone_holm(
    p_values: Sequence[float], smallest: Sequence[float], alpha: float
) -> list[float | None]:
    """Holm-adjusted p-values over the cases Tarone's rule keeps at level `alpha`.

    `smallest[i]` is the least p-value case i could reach given its margins. A case left
    out (None) cannot be rejected at this level whatever its outcome; a kept case is
    rejected exactly when its adjusted p-value is at most `alpha`.
    """
    count = len(p_values)
    ordered = sorted(smallest)
    keep_below = alpha
    for bound in range(1, count + 1):
        if bisect.bisect_right(ordered, alpha / bound) <= bound:
            keep_below = alpha / bound
            break
    kept = [i for i in range(count) if smallest[i] <= keep_below]
    adjusted: list[float | None] = [None] * count
    running = 0.0
    for rank, index in enumerate(sorted(kept, key=lambda i: p_values[i])):
        running = max(running, min(1.0, (len(kept) - rank) * p_values[index]))
        adjusted[index] = running
    return adjusted
