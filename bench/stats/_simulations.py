"""Coverage, width and gate-error simulations; each returns a list of table rows."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import numpy.typing as npt

from oloproof_core.stats import (
    DIFFERENCE_TUNING,
    SCORE_TUNING,
    BetTuning,
    bounded_mean_bounds,
    cr1_mean_interval,
)

from ._reference import (
    clopper_pearson_arrays,
    conditional_exact_difference,
    exact_cp_coverage,
    exact_gate_pass_rate,
    wald_difference,
)

FloatArray = npt.NDArray[np.float64]
Draw = Callable[[np.random.Generator, tuple[int, int]], FloatArray]
Row = dict[str, Any]

ALPHA = 0.05
# Rows per batch so that one batch holds about four million values.
_BATCH_VALUES = 4_000_000


def _bounds(samples: FloatArray, tuning: BetTuning = SCORE_TUNING) -> FloatArray:
    """Betting bounds for many rows, in memory-sized batches."""
    rows_per_batch = max(1, _BATCH_VALUES // max(1, samples.shape[1]))
    parts = [
        bounded_mean_bounds(samples[i : i + rows_per_batch], tuning=tuning)
        for i in range(0, samples.shape[0], rows_per_batch)
    ]
    return np.vstack(parts)


def _coverage(lower: FloatArray, upper: FloatArray, truth: float) -> tuple[float, float]:
    hits = (lower <= truth) & (truth <= upper)
    coverage = float(hits.mean())
    return coverage, float(np.sqrt(coverage * (1 - coverage) / hits.size))


def _bernoulli(p: float) -> Draw:
    return lambda rng, shape: (rng.random(shape) < p).astype(np.float64)


def _two_point(low: float, high: float, p_high: float) -> Draw:
    return lambda rng, shape: np.where(rng.random(shape) < p_high, high, low)


def _beta(a: float, b: float) -> Draw:
    return lambda rng, shape: rng.beta(a, b, shape)


DISTRIBUTIONS: dict[str, tuple[Draw, float]] = {
    "bernoulli(0.05)": (_bernoulli(0.05), 0.05),
    "bernoulli(0.3)": (_bernoulli(0.3), 0.3),
    "bernoulli(0.5)": (_bernoulli(0.5), 0.5),
    "bernoulli(0.9)": (_bernoulli(0.9), 0.9),
    "beta(2,5)": (_beta(2, 5), 2 / 7),
    "beta(0.5,0.5)": (_beta(0.5, 0.5), 0.5),
    "uniform": (lambda rng, shape: rng.random(shape), 0.5),
    "two-point {0.1:95%,1:5%}": (_two_point(0.1, 1.0, 0.05), 0.145),
    "bernoulli(0.01)": (_bernoulli(0.01), 0.01),
}


def bounded_mean_coverage(reps: int, ns: list[int]) -> list[Row]:
    """Coverage and width of the betting interval, with Clopper–Pearson width for binary data."""
    rows: list[Row] = []
    for index, (name, (draw, truth)) in enumerate(DISTRIBUTIONS.items()):
        for n in ns:
            rng = np.random.default_rng([1, index, n])
            sample = draw(rng, (reps, n))
            bounds = _bounds(sample)
            coverage, se = _coverage(bounds[:, 0], bounds[:, 1], truth)
            row: Row = {
                "distribution": name,
                "n": n,
                "coverage": coverage,
                "mc_se": se,
                "mean_width": float(np.mean(bounds[:, 1] - bounds[:, 0])),
            }
            if name.startswith("bernoulli"):
                k = sample.sum(axis=1).astype(np.int64)
                low, high = clopper_pearson_arrays(k, np.full_like(k, n), ALPHA)
                row["clopper_pearson_width"] = float(np.mean(high - low))
            rows.append(row)
    return rows


def truncation_comparison(reps: int, ns: list[int]) -> list[Row]:
    """Mean width of the betting interval for bet truncation c = 1/2 against c = 3/4."""
    rows: list[Row] = []
    names = ["bernoulli(0.3)", "beta(2,5)", "uniform", "two-point {0.1:95%,1:5%}"]
    for name in names:
        draw, truth = DISTRIBUTIONS[name]
        for n in ns:
            sample = draw(np.random.default_rng([2, n]), (reps, n))
            row: Row = {"distribution": name, "n": n}
            for c in (0.5, 0.75):
                bounds = bounded_mean_bounds(sample, tuning=BetTuning(c, 1.0))
                row[f"width_c{c}"] = float(np.mean(bounds[:, 1] - bounds[:, 0]))
                row[f"coverage_c{c}"] = _coverage(bounds[:, 0], bounds[:, 1], truth)[0]
            rows.append(row)
    return rows


def clopper_pearson_exact_coverage(ns: list[int]) -> list[Row]:
    """Exact coverage of Clopper–Pearson over a grid of true rates (no simulation error)."""
    grid = np.round(np.arange(0.01, 1.0, 0.01), 2)
    rows: list[Row] = []
    for n in ns:
        coverages = np.array([exact_cp_coverage(n, float(p)) for p in grid])
        rows.append(
            {
                "n": n,
                "min_coverage": float(coverages.min()),
                "rate_at_min": float(grid[coverages.argmin()]),
                "mean_coverage": float(coverages.mean()),
            }
        )
    return rows


def gate_at_threshold(reps: int, ns: list[int]) -> list[Row]:
    """How often a gate passes when the truth sits exactly at its threshold.

    Pass/fail: the Clopper–Pearson lower limit must exceed the threshold;
    computed exactly from the binomial distribution. Scores: the betting
    lower limit must exceed the threshold, simulated for Beta scores whose
    mean equals it.
    """
    rows: list[Row] = []
    for threshold in (0.5, 0.8, 0.9, 0.95, 0.99):
        for n in ns:
            rows.append(
                {
                    "kind": "pass/fail (Clopper-Pearson, exact)",
                    "threshold": threshold,
                    "n": n,
                    "pass_rate": exact_gate_pass_rate(n, threshold, ALPHA),
                }
            )
    for threshold in (0.5, 0.8, 0.9):
        # Beta(a, b) with mean = threshold and a + b = 4.
        a = 4 * threshold
        # Sizes above 1000 cost minutes and add nothing the exact rows don't show.
        for n in [size for size in ns if size <= 1000]:
            sample = np.random.default_rng([3, n]).beta(a, 4 - a, (reps, n))
            lower = _bounds(sample)[:, 0]
            rows.append(
                {
                    "kind": "scores (betting, simulated Beta)",
                    "threshold": threshold,
                    "n": n,
                    "pass_rate": float(np.mean(lower > threshold)),
                }
            )
    return rows


PAIRED_SETTINGS = [(0.05, 0.05), (0.02, 0.15), (0.1, 0.02), (0.25, 0.1), (0.01, 0.0)]


def paired_proportion_coverage(reps: int, ns: list[int]) -> list[Row]:
    """Paired pass-rate differences: betting (the library) against two comparison intervals."""
    rows: list[Row] = []
    for p_improved, p_regressed in PAIRED_SETTINGS:
        truth = p_improved - p_regressed
        for n in ns:
            draw = np.random.default_rng([4, n, int(1000 * p_improved)]).random((reps, n))
            d = np.where(
                draw < p_improved, 1.0, np.where(draw < p_improved + p_regressed, -1.0, 0.0)
            )
            bounds = _bounds((d + 1) / 2) * 2 - 1
            improved = (d == 1).sum(axis=1)
            regressed = (d == -1).sum(axis=1)
            row: Row = {"p_improved": p_improved, "p_regressed": p_regressed, "n": n}
            for method, (low, high) in {
                "betting": (bounds[:, 0], bounds[:, 1]),
                "conditional_exact": conditional_exact_difference(improved, regressed, n, ALPHA),
                "wald": wald_difference(improved, regressed, n, ALPHA),
            }.items():
                row[f"{method}_coverage"] = _coverage(low, high, truth)[0]
                row[f"{method}_width"] = float(np.mean(high - low))
            rows.append(row)
    return rows


def paired_score_coverage(reps: int, ns: list[int]) -> list[Row]:
    """Paired score differences: a ~ Beta(2, 2), b = clip(a + N(shift, 0.15)).

    With the bets compare uses for scores (``DIFFERENCE_TUNING``).
    """
    rows: list[Row] = []
    for shift in (0.0, 0.05, -0.1):
        base = np.random.default_rng([5, 0]).beta(2, 2, 4_000_000)
        noise = np.random.default_rng([5, 1]).normal(shift, 0.15, 4_000_000)
        truth = float(np.mean(np.clip(base + noise, 0, 1) - base))
        for n in ns:
            rng = np.random.default_rng([5, n, int(100 * shift) + 50])
            a = rng.beta(2, 2, (reps, n))
            b = np.clip(a + rng.normal(shift, 0.15, (reps, n)), 0, 1)
            bounds = _bounds((b - a + 1) / 2, DIFFERENCE_TUNING) * 2 - 1
            coverage, se = _coverage(bounds[:, 0], bounds[:, 1], truth)
            rows.append(
                {
                    "shift": shift,
                    "n": n,
                    "true_difference": truth,
                    "coverage": coverage,
                    "mc_se": se,
                    "mean_width": float(np.mean(bounds[:, 1] - bounds[:, 0])),
                }
            )
    return rows


def missing_not_at_random(reps: int, ns: list[int]) -> list[Row]:
    """Coverage when failures go missing more often than passes (bounded, not dropped).

    Each case fails with probability 0.3 in the candidate; a failing case
    is missing with probability 0.5, a passing one with 0.05. Dropping
    missing cases is shown for contrast.
    """
    rows: list[Row] = []
    for n in ns:
        rng = np.random.default_rng([6, n])
        passed = rng.random((reps, n)) < 0.7
        hidden = np.where(passed, rng.random((reps, n)) < 0.05, rng.random((reps, n)) < 0.5)
        k = (passed & ~hidden).sum(axis=1)
        observed = (~hidden).sum(axis=1)
        missing = hidden.sum(axis=1)
        total = np.full_like(k, n)
        bounded_low, _ = clopper_pearson_arrays(k, total, ALPHA)
        _, bounded_high = clopper_pearson_arrays(k + missing, total, ALPHA)
        dropped_low, dropped_high = clopper_pearson_arrays(k, observed, ALPHA)
        rows.append(
            {
                "n": n,
                "bounded_coverage": _coverage(bounded_low, bounded_high, 0.7)[0],
                "bounded_width": float(np.mean(bounded_high - bounded_low)),
                "dropped_coverage": _coverage(dropped_low, dropped_high, 0.7)[0],
            }
        )
    return rows


def clustered_coverage(reps: int, clusters: list[int]) -> list[Row]:
    """Clustered data (10 cases per cluster, cluster effect sd 0.15): CR1 against i.i.d. betting."""
    rows: list[Row] = []
    per_cluster = 10
    for groups in clusters:
        rng = np.random.default_rng([7, groups])
        effects = np.repeat(rng.normal(0, 0.15, (reps, groups)), per_cluster, axis=1)
        x = np.clip(0.6 + effects + rng.normal(0, 0.1, effects.shape), 0, 1)
        # Truth of the clipped model from a large independent draw.
        big = np.random.default_rng([7, 0])
        big_x = np.clip(0.6 + big.normal(0, 0.15, 4_000_000) + big.normal(0, 0.1, 4_000_000), 0, 1)
        truth = float(big_x.mean())
        keys = np.repeat(np.arange(groups), per_cluster).tolist()
        cluster_reps = min(reps, 2000)
        hits = 0
        for row_values in x[:cluster_reps]:
            hits += cr1_mean_interval(row_values.tolist(), keys).contains(truth)
        naive = _bounds(x)
        rows.append(
            {
                "clusters": groups,
                "n": groups * per_cluster,
                "cr1_coverage": hits / cluster_reps,
                "iid_betting_coverage": _coverage(naive[:, 0], naive[:, 1], truth)[0],
            }
        )
    return rows
