"""Comparison methods and exact calculations used only by the simulations."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt
from scipy.stats import beta, binom

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]


def clopper_pearson_arrays(k: IntArray, n: IntArray, alpha: float) -> tuple[FloatArray, FloatArray]:
    """Vectorised Clopper–Pearson limits (same formula as the library, for many counts)."""
    k = np.asarray(k, dtype=np.float64)
    n = np.asarray(n, dtype=np.float64)
    with np.errstate(invalid="ignore", divide="ignore"):
        lower = np.where(k > 0, beta.ppf(alpha / 2, np.maximum(k, 1), n - k + 1), 0.0)
        upper = np.where(k < n, beta.ppf(1 - alpha / 2, k + 1, np.maximum(n - k, 1)), 1.0)
    lower = np.where(n == 0, 0.0, lower)
    upper = np.where(n == 0, 1.0, upper)
    return lower, upper


def exact_cp_coverage(n: int, p: float, alpha: float = 0.05) -> float:
    """Exact coverage of the Clopper–Pearson interval: sum of binomial mass over covering k."""
    k = np.arange(n + 1)
    lower, upper = clopper_pearson_arrays(k, np.full(n + 1, n), alpha)
    covers = (lower <= p) & (p <= upper)
    return float(binom.pmf(k[covers], n, p).sum())


def exact_gate_pass_rate(n: int, rate: float, alpha: float = 0.05) -> float:
    """Probability that the Clopper–Pearson lower limit exceeds ``rate`` when the truth is ``rate``.

    The gate rule passes when the whole interval clears the threshold; at a
    true rate exactly at the threshold this is the gate's false-pass rate.
    """
    k = np.arange(n + 1)
    lower, _ = clopper_pearson_arrays(k, np.full(n + 1, n), alpha)
    return float(binom.pmf(k[lower > rate], n, rate).sum())


def conditional_exact_difference(
    improved: IntArray, regressed: IntArray, n: int, alpha: float
) -> tuple[FloatArray, FloatArray]:
    """Bonferroni-combined exact conditional interval for a paired difference.

    The difference is ``psi * (2 pi - 1)`` with ``psi`` the discordance rate
    and ``pi`` the improved share of discordant pairs (conditionally
    binomial, as in McNemar's test). Each gets a Clopper–Pearson interval at
    ``alpha / 2``; the product's range over the rectangle is the interval.
    """
    discordant = improved + regressed
    psi_low, psi_high = clopper_pearson_arrays(discordant, np.full_like(discordant, n), alpha / 2)
    pi_low, pi_high = clopper_pearson_arrays(improved, discordant, alpha / 2)
    g_low, g_high = 2 * pi_low - 1, 2 * pi_high - 1
    lower = np.minimum(psi_low * g_low, psi_high * g_low)
    upper = np.maximum(psi_low * g_high, psi_high * g_high)
    return lower, upper


def wald_difference(
    improved: IntArray, regressed: IntArray, n: int, alpha: float
) -> tuple[FloatArray, FloatArray]:
    """Textbook Wald interval for a paired difference (Agresti 2013, §11.1.1), for reference."""
    from scipy.stats import norm

    p01 = improved / n
    p10 = regressed / n
    diff = p01 - p10
    se = np.sqrt(np.maximum(p01 + p10 - diff**2, 0.0) / n)
    z = norm.ppf(1 - alpha / 2)
    return diff - z * se, diff + z * se
