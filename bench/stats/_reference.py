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


# Finite-sample intervals for a mean on [0, 1], compared with the engine's betting
# interval on paired differences (bench.stats._round_two.paired_widths).


def maurer_pontil(x: FloatArray, alpha: float) -> FloatArray:
    """Empirical Bernstein interval of Maurer & Pontil (2009), Thm 4, two-sided."""
    n = x.shape[1]
    log_term = np.log(4.0 / alpha)
    half = np.sqrt(2.0 * x.var(axis=1, ddof=1) * log_term / n) + 7.0 * log_term / (3.0 * (n - 1))
    mean = x.mean(axis=1)
    return np.column_stack((mean - half, mean + half))


def hoeffding(x: FloatArray, alpha: float) -> FloatArray:
    """Hoeffding (1963): half-width sqrt(log(2 / alpha) / (2 n)) on [0, 1]."""
    half = np.sqrt(np.log(2.0 / alpha) / (2.0 * x.shape[1]))
    mean = x.mean(axis=1)
    return np.column_stack((mean - half, mean + half))


def predictable_plug_in_bernstein(x: FloatArray, alpha: float, cap: float = 0.5) -> FloatArray:
    """Waudby-Smith & Ramdas (2024), PrPl-EB interval tuned to n, intersected over time.

    Bets lambda_t = min(sqrt(2 log(2/alpha) / (n s2_{t-1})), cap), penalty
    v_t psi_E(lambda_t) with v_t = 4 (x_t - mu_{t-1})^2, psi_E(l) = (-log(1-l) - l) / 4.
    """
    rows, n = x.shape
    t = np.arange(1, n + 1)
    mu = (0.5 + np.cumsum(x, axis=1)) / (t + 1)
    s2 = (0.25 + np.cumsum((x - mu) ** 2, axis=1)) / (t + 1)
    mu_prev = np.hstack((np.full((rows, 1), 0.5), mu[:, :-1]))
    s2_prev = np.hstack((np.full((rows, 1), 0.25), s2[:, :-1]))
    lam = np.minimum(np.sqrt(2.0 * np.log(2.0 / alpha) / (n * s2_prev)), cap)
    penalty = 4.0 * (x - mu_prev) ** 2 * (-np.log1p(-lam) - lam) / 4.0
    weight = np.cumsum(lam, axis=1)
    centre = np.cumsum(lam * x, axis=1) / weight
    half = (np.log(2.0 / alpha) + np.cumsum(penalty, axis=1)) / weight
    lower = np.maximum.accumulate(centre - half, axis=1)[:, -1]
    upper = np.minimum.accumulate(centre + half, axis=1)[:, -1]
    return np.column_stack((np.clip(lower, 0, 1), np.clip(upper, 0, 1)))


def gaffke(x: FloatArray, alpha: float, draws: int = 1000) -> FloatArray:
    """Gaffke (2005), Learned-Miller & Thomas (2019): Dirichlet-weighted means, range end added.

    Lower end: the alpha/2 quantile of sum w_i x_i + w_0 * 0 over w ~ Dirichlet(1, ..., 1)
    (n + 1 weights); the upper end by symmetry. Its coverage is conjectured, not proven,
    for every distribution on [0, 1] (Learned-Miller & Thomas 2019): a reference only.
    """
    n = x.shape[1]
    weights = np.random.default_rng(2005).dirichlet(np.ones(n + 1), draws)

    def lower_end(values: FloatArray) -> FloatArray:
        # The weight on the extra point at 0 adds nothing to the sum.
        result: FloatArray = np.quantile(values @ weights[:, :n].T, alpha / 2, axis=1)
        return result

    return np.column_stack((lower_end(x), 1.0 - lower_end(1.0 - x)))
