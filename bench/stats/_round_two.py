"""Simulations for the second round of statistics: order, few clusters, paired widths, power.

Each function returns table rows; `bench.stats.coverage` prints and records them.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from scipy.stats import norm
from scipy.stats import t as student_t

from oloproof_core.evaluation.aggregate import estimate_metric
from oloproof_core.stats import (
    DIFFERENCE_TUNING,
    SCORE_TUNING,
    BetTuning,
    betting_cases_for_power,
    bounded_mean_bounds,
    clustered_mean_interval,
    cr1_mean_interval,
    mean_interval,
    paired_mean_difference,
    paired_proportion_difference,
    proportion_cases_for_power,
)

from ._reference import gaffke, hoeffding, maurer_pontil, predictable_plug_in_bernstein

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


def _paired_sample(rng: np.random.Generator, reps: int, n: int, setting: str) -> Any:
    """Per-case differences b - a of uniform scores; truth 0 in every setting."""
    rho = 0.5 if setting == "correlation 0.5" else 0.9
    z1 = rng.standard_normal((reps, n))
    z2 = rho * z1 + math.sqrt(1 - rho**2) * rng.standard_normal((reps, n))
    d = norm.cdf(z2) - norm.cdf(z1)  # uniform scores through a Gaussian copula
    if setting == "correlation 0.9, 3 % broken":
        # A case that breaks completely (or is fixed): 1.5 % of pairs at -1, 1.5 % at +1.
        u = rng.random((reps, n))
        d = np.where(u < 0.015, -1.0, np.where(u < 0.03, 1.0, d))
    return d


PAIRED_METHODS: dict[str, Any] = {
    "betting (engine)": lambda u: bounded_mean_bounds(u, tuning=DIFFERENCE_TUNING),
    "betting, largest bets allowed": lambda u: bounded_mean_bounds(
        u, tuning=BetTuning(0.999999, 1e-6), horizon=1
    ),
    "betting, c = 0.999": lambda u: bounded_mean_bounds(u, tuning=BetTuning(0.999, 0.2)),
    "betting, score tuning": lambda u: bounded_mean_bounds(u, tuning=SCORE_TUNING),
    "empirical Bernstein, predictable plug-in (WSR)": lambda u: predictable_plug_in_bernstein(
        u, 0.05
    ),
    "empirical Bernstein (Maurer & Pontil)": lambda u: maurer_pontil(u, 0.05),
    "Hoeffding": lambda u: hoeffding(u, 0.05),
    "Gaffke (coverage conjectured)": lambda u: gaffke(u, 0.05),
}
PAIRED_SETTINGS = ("correlation 0.5", "correlation 0.9", "correlation 0.9, 3 % broken")


def paired_widths(reps: int, ns: list[int]) -> list[Row]:
    """Paired score differences: mean width over the paired-t width, and coverage, per method."""
    rows: list[Row] = []
    for setting in PAIRED_SETTINGS:
        for n in ns:
            rng = np.random.default_rng([n, len(setting)])
            d = _paired_sample(rng, reps, n, setting)
            t_width = 2 * student_t.ppf(0.975, n - 1) * d.std(axis=1, ddof=1) / math.sqrt(n)
            unit = (d + 1.0) / 2.0
            row: Row = {"setting": setting, "n": n, "paired-t width": float(t_width.mean())}
            for name, method in PAIRED_METHODS.items():
                bounds = method(unit)
                width = 2.0 * (bounds[:, 1] - bounds[:, 0])
                row[f"{name}: width / t"] = float(np.mean(width / t_width))
                row[f"{name}: coverage"] = float(
                    np.mean((bounds[:, 0] <= 0.5) & (bounds[:, 1] >= 0.5))
                )
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


def missing_scores(reps: int, ns: list[int]) -> list[Row]:
    """Scores that go missing more often when low: bounded (engine) vs dropped, single and paired.

    Scores ~ Beta(2, 2) (mean 0.5). A score below 0.3 is missing with probability
    0.5, any other with 0.05. Paired: the baseline ~ Beta(2, 2), the candidate =
    clip(baseline + N(0, 0.1)) goes missing the same way (true difference 0).
    """
    rows: list[Row] = []
    for n in ns:
        rng = np.random.default_rng([8, n])
        hits = {"bounded": 0, "dropped": 0, "paired bounded": 0, "paired dropped": 0}
        for _ in range(reps):
            a = rng.beta(2, 2, n)
            b = np.clip(a + rng.normal(0, 0.1, n), 0, 1)
            hide = rng.random(n) < np.where(b < 0.3, 0.5, 0.05)
            seen = b[~hide]
            hits["bounded"] += mean_interval(seen, int(hide.sum()), 0, 1).contains(0.5)
            hits["dropped"] += mean_interval(seen, 0, 0, 1).contains(0.5)
            cand = [None if h else float(v) for h, v in zip(hide, b, strict=True)]
            both = paired_mean_difference(list(a), cand, 0, 1).interval
            kept = paired_mean_difference(list(a[~hide]), list(seen), 0, 1).interval
            hits["paired bounded"] += both.contains(TRUE_PAIRED_SHIFT)
            hits["paired dropped"] += kept.contains(TRUE_PAIRED_SHIFT)
        row: Row = {"n": n, "runs": reps}
        row.update({f"{name} coverage": count / reps for name, count in hits.items()})
        rows.append(row)
    return rows


def _true_paired_shift() -> float:
    """E[clip(a + N(0, 0.1)) - a] for a ~ Beta(2, 2): clipping moves it off 0 a little."""
    rng = np.random.default_rng(88)
    a = rng.beta(2, 2, 4_000_000)
    return float(np.mean(np.clip(a + rng.normal(0, 0.1, a.size), 0, 1) - a))


TRUE_PAIRED_SHIFT = _true_paired_shift()
