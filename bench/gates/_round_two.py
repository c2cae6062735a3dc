"""Gate modes of the second round: sequential monitoring and error control across rules/metrics.

Sequential monitoring. The running interval's lower end never moves down
between looks (the capital is a running maximum), so a gate looked at every
`batch` cases passes at some look exactly when the sequence over all the cases
seen clears the threshold at *some* time; simulating the full sequence once per
run therefore gives the share of runs that would ever pass, however often one
looks (an upper bound for looks every 20 cases). The fixed-size interval
re-checked every 20 cases is simulated look by look, for contrast.

Planning a sequential gate. `sequential_cases_for_power` simulates the gate's
capital on a Beta (or two-point) truth; here fresh runs are drawn (for paired
differences from another shape, the Gaussian-copula differences of bench.stats)
and read by the engine's running interval at looks every 50 cases.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from scipy.stats import beta, binom, norm

from oloproof_core.stats import (
    DIFFERENCE_TUNING,
    SCORE_TUNING,
    benjamini_hochberg,
    betting_cases_for_power,
    bounded_mean_bounds,
    holm_rejections,
    paired_mean_difference,
    proportion_cases_for_power,
    sequential_cases_for_power,
)

Row = dict[str, Any]


def _draw(rng: np.random.Generator, kind: str, reps: int, n: int, threshold: float) -> Any:
    if kind == "pass_fail":
        return (rng.random((reps, n)) < threshold).astype(float)
    strength = 10.0  # Beta with mean at the threshold
    return rng.beta(threshold * strength, (1 - threshold) * strength, (reps, n))


def sequential_at_threshold(reps: int, horizon: int = 1000, every: int = 20) -> list[Row]:
    """Share of runs whose gate ever passes with the truth exactly at the threshold."""
    rows: list[Row] = []
    for kind in ("pass_fail", "score"):
        for threshold in (0.8, 0.9):
            rng = np.random.default_rng([int(threshold * 10), len(kind)])
            x = _draw(rng, kind, reps, horizon, threshold)
            lower = bounded_mean_bounds(x, tuning=SCORE_TUNING, ordered=True, horizon=horizon)[:, 0]
            anytime = float(np.mean(lower > threshold))
            naive = _naive_repeated_looks(x, threshold, every, kind)
            rows.append(
                {
                    "data": kind,
                    "threshold": threshold,
                    "cases": horizon,
                    "look every": every,
                    "anytime-valid: ever passes": anytime,
                    "fixed-size re-checked: ever passes": naive,
                }
            )
    return rows


def _naive_repeated_looks(x: Any, threshold: float, every: int, kind: str) -> float:
    reps, horizon = x.shape
    passed = np.zeros(reps, dtype=bool)
    for n in range(every, horizon + 1, every * (1 if kind == "pass_fail" else 5)):
        if kind == "pass_fail":
            k = x[:, :n].sum(axis=1)
            low = np.where(k > 0, beta.ppf(0.025, np.maximum(k, 1), n - k + 1), 0.0)
        else:
            low = bounded_mean_bounds(x[:, :n])[:, 0]
        passed |= low >= threshold
    return float(passed.mean())


def rules_at_threshold(
    reps: int, rules: int = 10, n: int = 200, threshold: float = 0.8
) -> list[Row]:
    """Ten pass/fail `min` rules, every truth at its threshold: how often the gate fails."""
    rng = np.random.default_rng(10)
    k = rng.binomial(n, threshold, (reps, rules))
    # One-sided fail p-value of each rule: P(X <= k | threshold) (exact, Clopper–Pearson).
    p_fail = binom.cdf(k, n, threshold)
    plain = float(np.mean((p_fail <= 0.025).any(axis=1)))
    holm = float(np.mean([any(holm_rejections(row, 0.025)) for row in p_fail]))
    return [
        {
            "rules": rules,
            "n": n,
            "gate fails, each rule alone": plain,
            "gate fails, Holm (default)": holm,
        }
    ]


def metrics_equal_releases(reps: int, metrics: int = 20, n: int = 100) -> list[Row]:
    """Two equal releases compared on 20 score metrics: how often is anything flagged?

    Per case a difficulty c ~ Beta(2, 2); both releases score clip(c + N(0, 0.1)),
    independently, so the pairs are exchangeable and every true difference is 0.
    """
    rng = np.random.default_rng(20)
    any_plain = any_bh = 0
    for _ in range(reps):
        p = []
        for _ in range(metrics):
            c = rng.beta(2, 2, n)
            a = np.clip(c + rng.normal(0, 0.1, n), 0, 1)
            b = np.clip(c + rng.normal(0, 0.1, n), 0, 1)
            p.append(paired_mean_difference(list(a), list(b), 0.0, 1.0).p_value)
        any_plain += min(p) <= 0.05
        any_bh += min(benjamini_hochberg(p)) <= 0.05
    return [
        {
            "metrics": metrics,
            "n": n,
            "runs": reps,
            "some p <= 0.05": any_plain / reps,
            "some BH q <= 0.05 (flag)": any_bh / reps,
        }
    ]


def _plan_draws(rng: np.random.Generator, kind: str, reps: int, n: int, truth: float) -> Any:
    """Unit values for the plan check; the paired case is *not* the plan's Beta shape."""
    if kind == "pass_fail":
        return (rng.random((reps, n)) < truth).astype(float)
    if kind == "score":
        strength = truth * (1 - truth) / 0.15**2 - 1  # sd 0.15
        return rng.beta(truth * strength, (1 - truth) * strength, (reps, n))
    z1 = rng.standard_normal((reps, n))  # equal releases, uniform scores, correlation 0.9
    z2 = 0.9 * z1 + math.sqrt(1 - 0.81) * rng.standard_normal((reps, n))
    return (norm.cdf(z2) - norm.cdf(z1) + 1.0) / 2.0


PLAN_SETTINGS: list[tuple[str, str, float, float, float, Any, Any]] = [
    # kind, rule, planned truth, threshold (unit scale), sd (unit), support, tuning
    ("pass_fail", "min 0.8, truth 0.9", 0.9, 0.8, 0.3, "two-point", SCORE_TUNING),
    ("pass_fail", "min 0.9, truth 0.95", 0.95, 0.9, math.sqrt(0.95 * 0.05), "two-point",
     SCORE_TUNING),
    ("score", "min 0.7, truth 0.75, sd 0.15", 0.75, 0.7, 0.15, "continuous", SCORE_TUNING),
    ("paired", "no_regression margin 0.02, equal releases", 0.5, 0.49, 0.0674, "continuous",
     DIFFERENCE_TUNING),
]  # fmt: skip


def _looks_until_pass(x: Any, threshold: float, horizon: int, batch: int, tuning: Any) -> Any:
    """Per run: cases run when the gate looks every `batch` cases and stops on a pass."""
    run = np.full(x.shape[0], horizon, dtype=float)
    open_runs = np.ones(x.shape[0], dtype=bool)
    for look in range(batch, horizon + batch, batch):
        cases = min(look, horizon)
        lower = bounded_mean_bounds(
            x[open_runs, :cases], tuning=tuning, ordered=True, horizon=horizon
        )[:, 0]
        passed = np.flatnonzero(open_runs)[lower >= threshold]
        run[passed] = cases
        open_runs[passed] = False
    return run, ~open_runs


def sequential_plan_check(reps: int, batch: int = 50) -> list[Row]:
    """The sequential plan against fresh runs of the anytime-valid gate (target power 0.80)."""
    rows: list[Row] = []
    for kind, rule, truth, threshold, sd, support, tuning in PLAN_SETTINGS:
        planned = sequential_cases_for_power(
            truth, threshold, sd, support=support, batch=batch, tuning=tuning
        )
        fixed = (
            proportion_cases_for_power(truth, threshold)
            if kind == "pass_fail"
            else betting_cases_for_power(sd, truth - threshold)
        )
        assert planned.cases is not None
        assert fixed is not None
        rng = np.random.default_rng([planned.cases, 77])
        x = _plan_draws(rng, kind, reps, planned.cases, truth)
        run, passed = _looks_until_pass(x, threshold, planned.cases, batch, tuning)
        at_fixed = bounded_mean_bounds(x[:, :fixed], tuning=tuning, ordered=True, horizon=fixed)
        rows.append(
            {
                "rule": rule,
                "exact (pass/fail) or formula plan": fixed,
                "sequential plan": planned.cases,
                "passes at the sequential plan": float(passed.mean()),
                "sequential gate given that plan: passes": float(
                    np.mean(at_fixed[:, 0] >= threshold)
                ),
                "cases run on average (planned)": planned.mean_cases_run,
                "cases run on average (simulated)": float(run.mean()),
            }
        )
    return rows


def no_regression_scores_at_margin(reps: int, margin: float = 0.02) -> list[Row]:
    """Paired scores with the true difference exactly at -margin: how often does the rule pass?

    Differences of uniform scores (Gaussian copula) scaled into [-1, 1 - 2 margin]
    and shifted by -margin, so the truth is exactly -margin. Fixed-size: the
    compare interval at n; sequential: the anytime-valid sequence over 1,000
    cases (ever passes, at any looks), both with the engine's difference tuning.
    """
    rows: list[Row] = []
    for rho in (0.5, 0.9):
        rng = np.random.default_rng([int(rho * 10), 14])
        z1 = rng.standard_normal((reps, 1000))
        z2 = rho * z1 + math.sqrt(1 - rho**2) * rng.standard_normal((reps, 1000))
        d = (norm.cdf(z2) - norm.cdf(z1)) * (1 - margin) - margin
        unit = (d + 1.0) / 2.0
        row: Row = {"correlation": rho, "margin": margin}
        for n in (100, 400):
            lower = 2 * bounded_mean_bounds(unit[:, :n], tuning=DIFFERENCE_TUNING)[:, 0] - 1
            row[f"fixed n = {n}: passes"] = float(np.mean(lower >= -margin))
        running = bounded_mean_bounds(unit, tuning=DIFFERENCE_TUNING, ordered=True, horizon=1000)
        row["sequential, 1,000 cases: ever passes"] = float(
            np.mean(2 * running[:, 0] - 1 >= -margin)
        )
        rows.append(row)
    return rows
