"""Simulations for the second round of statistics: order, few clusters, paired widths, power.

Each function returns table rows; `bench.stats.coverage` prints and records them.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from scipy.stats import norm
from scipy.stats import t as student_t

from oloproof_core.aggregate import estimate_metric
from oloproof_core.stats import (
    DIFFERENCE_TUNING,
    SCORE_TUNING,
    betting_cases_for_power,
    bounded_mean_bounds,
    clustered_mean_interval,
    cr1_mean_interval,
    paired_proportion_difference,
    proportion_cases_for_power,
)

Row = dict[str, Any]


def order_invariance(orders: int = 50) -> list[Row]:
    """The issue's example: 100 Beta(8,2) scores in 50 orders; spread of the lower end."""
    rng = np.random.default_rng(14)
    scores = rng.beta(8, 2, 100)
    ids = [f"case-{i:03d}" for i in range(100)]
    lows_keyed, lows_unkeyed = [], []
    for _ in range(orders):
        order = rng.permutation(100)
        values = [float(scores[i]) for i in order]
        keyed = estimate_metric(
            "s", "s", values, "score", (0.0, 1.0), 0.95, keys=[ids[i] for i in order]
        )
        lows_keyed.append(keyed.interval.lower)
        lows_unkeyed.append(estimate_metric("s", "s", values, "score", (0, 1), 0.95).interval.lower)
    return [
        {
            "reading order": "case-id digests (engine)",
            "orders": orders,
            "lowest lower end": min(lows_keyed),
            "highest lower end": max(lows_keyed),
        },
        {
            "reading order": "as given (no ids)",
            "orders": orders,
            "lowest lower end": min(lows_unkeyed),
            "highest lower end": max(lows_unkeyed),
        },
    ]


def _clustered_sample(rng: np.random.Generator, clusters: int, size: int, kind: str) -> Any:
    if kind == "pass_fail":  # Beta(1/2, 1/2) cluster rates: ICC 0.5
        rates = np.repeat(rng.beta(0.5, 0.5, clusters), size)
        return (rng.random(clusters * size) < rates).astype(float)
    effects = np.repeat(rng.normal(0.0, 0.15, clusters), size)  # ICC 0.5
    return np.clip(0.5 + effects + rng.normal(0.0, 0.15, clusters * size), 0.0, 1.0)


def few_clusters(reps: int, counts: list[int], size: int = 20) -> list[Row]:
    """Coverage and width at ICC 0.5: betting on cluster means (engine) vs CR1."""
    rows: list[Row] = []
    for kind in ("pass_fail", "score"):
        for clusters in counts:
            rng = np.random.default_rng([clusters, len(kind)])
            labels = [g for g in range(clusters) for _ in range(size)]
            hits = {"betting": 0, "cr1": 0}
            widths = {"betting": 0.0, "cr1": 0.0}
            for _ in range(reps):
                values = list(_clustered_sample(rng, clusters, size, kind))
                for name, method in (
                    ("betting", clustered_mean_interval),
                    ("cr1", cr1_mean_interval),
                ):
                    interval = method(values, labels)
                    hits[name] += interval.contains(0.5)
                    widths[name] += interval.width
            rows.append(
                {
                    "data": kind,
                    "clusters": f"{clusters} x {size}",
                    "betting coverage": hits["betting"] / reps,
                    "betting width": widths["betting"] / reps,
                    "cr1 coverage": hits["cr1"] / reps,
                    "cr1 width": widths["cr1"] / reps,
                }
            )
    return rows


def _empirical_bernstein(x: np.ndarray, alpha: float) -> np.ndarray:
    """Maurer & Pontil (2009) empirical Bernstein interval on [0, 1], two-sided (reference)."""
    n = x.shape[1]
    var = x.var(axis=1, ddof=1)
    log_term = math.log(4.0 / alpha)
    half = np.sqrt(2.0 * var * log_term / n) + 7.0 * log_term / (3.0 * (n - 1))
    mean = x.mean(axis=1)
    return np.column_stack((mean - half, mean + half))


def paired_widths(reps: int, ns: list[int], rho: float = 0.9) -> list[Row]:
    """Paired score differences, correlation 0.9: width over the paired-t width, coverage."""
    rows: list[Row] = []
    for n in ns:
        rng = np.random.default_rng([n, 9])
        z1 = rng.standard_normal((reps, n))
        z2 = rho * z1 + math.sqrt(1 - rho**2) * rng.standard_normal((reps, n))
        a, b = norm.cdf(z1), norm.cdf(z2)  # uniform scores, same mean
        d = b - a
        t_width = 2 * student_t.ppf(0.975, n - 1) * d.std(axis=1, ddof=1) / math.sqrt(n)
        unit = (d + 1.0) / 2.0
        row: Row = {"n": n, "paired-t width": float(t_width.mean())}
        for name, bounds in (
            (
                "betting, difference tuning (engine)",
                bounded_mean_bounds(unit, tuning=DIFFERENCE_TUNING),
            ),
            ("betting, score tuning (before)", bounded_mean_bounds(unit, tuning=SCORE_TUNING)),
            ("empirical Bernstein", _empirical_bernstein(unit, 0.05)),
        ):
            width = 2.0 * (bounds[:, 1] - bounds[:, 0])
            row[f"{name}: width / t"] = float(np.mean(width / t_width))
            row[f"{name}: coverage"] = float(np.mean((bounds[:, 0] <= 0.5) & (bounds[:, 1] >= 0.5)))
        rows.append(row)
    return rows


def coherence(n: int = 60) -> list[Row]:
    """Every (improved, regressed) split of n pass/fail pairs: does p disagree with the interval?"""
    disagree = cells = 0
    for improved in range(0, 27):
        for regressed in range(0, 27 - improved if improved < 27 else 1):
            base = [True] * regressed + [False] * improved + [True] * (n - improved - regressed)
            cand = [False] * regressed + [True] * improved + [True] * (n - improved - regressed)
            result = paired_proportion_difference(base, cand)
            cells += 1
            disagree += (result.p_value <= 0.05) != (not result.interval.contains(0.0))
    return [{"pairs": n, "cells": cells, "disagreeing cells": disagree}]


def power_check(reps: int) -> list[Row]:
    """Share of simulated runs that pass at the planned number of cases (target 0.80)."""
    rows: list[Row] = []
    for rate, threshold in ((0.9, 0.8), (0.95, 0.9), (0.85, 0.8)):
        n = proportion_cases_for_power(rate, threshold)
        assert n is not None
        k = np.random.default_rng([n, 1]).binomial(n, rate, reps)
        from scipy.stats import beta

        lower = np.where(k > 0, beta.ppf(0.025, np.maximum(k, 1), n - k + 1), 0.0)
        rows.append(
            {
                "rule": f"pass/fail {rate} vs min {threshold}",
                "planned n": n,
                "pass rate": float(np.mean(lower >= threshold)),
            }
        )
    for sd, effect, mean in ((0.15, 0.05, 0.75), (0.2, 0.1, 0.6), (0.1, 0.02, 0.8)):
        n = betting_cases_for_power(sd, effect)
        assert n is not None
        runs = min(reps, max(200, 2_000_000 // n))
        sample = np.clip(np.random.default_rng([n, 2]).normal(mean, sd, (runs, n)), 0.0, 1.0)
        truth_shift = float(sample.mean()) - mean  # clipping moves the mean a little
        bounds = bounded_mean_bounds(sample)
        rows.append(
            {
                "rule": f"scores sd {sd}, effect {effect}",
                "planned n": n,
                "pass rate": float(np.mean(bounds[:, 0] >= mean - effect + truth_shift)),
            }
        )
    return rows
