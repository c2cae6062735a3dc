"""Operating characteristics of release gates, at sizes too large for the test suite.

Run: .venv/bin/python -m bench.gates.simulate [--reps 4000]
Writes bench/results/gates.json and prints a summary table.

1. min rule, true pass rate exactly at the threshold: exact probability of a
   pass (sum of binomial probabilities of the counts whose Clopper–Pearson
   lower end clears the threshold — the rule's own decision, spot-checked
   against `Policy.decide`).
2. no_regression rule, true paired difference exactly at −margin: share of
   simulated runs that pass (betting interval on per-case differences).
3. Power: share of runs flagged `fail` for a clear regression, by size.
4. Coverage of the cluster-aware paired interval with strongly clustered data.
5. The sample-size readout: for inconclusive runs, the share that become
   conclusive after adding the suggested number of cases drawn at the true rate.
6. Second round (`_round_two`): sequential monitoring at the threshold, many
   rules and many metrics, and the plan of a sequential gate against fresh runs.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path
from typing import Any

import numpy as np
from scipy.stats import beta, binom

from oloproof_core.evaluation.aggregate import estimate_metric
from oloproof_core.gates import load_policy
from oloproof_core.results.compare._paired import paired_figures
from oloproof_core.results.result import Result
from oloproof_core.stats import bounded_mean_bounds, cases_needed, clopper_pearson

from . import _round_two as round_two

RESULTS = Path(__file__).resolve().parents[1] / "results"


def _lower_bounds(n: int, confidence: float = 0.95) -> np.ndarray:
    k = np.arange(n + 1)
    tail = (1.0 - confidence) / 2.0
    with np.errstate(invalid="ignore"):
        lower = beta.ppf(tail, k, n - k + 1)
    return np.where(k == 0, 0.0, lower)


def _run(successes: int, n: int) -> Result:
    metric = estimate_metric(
        "m", "m", [1.0] * successes + [0.0] * (n - successes), "pass_fail", (0.0, 1.0), 0.95
    )
    return Result(metrics=[metric], cases=[], provenance={"confidence": 0.95})


def at_threshold() -> list[dict[str, float]]:
    rows = []
    for threshold in (0.7, 0.8, 0.9, 0.95, 0.99):
        policy = load_policy({"version": 1, "rules": [{"metric": "m", "min": threshold}]})
        for n in (30, 100, 300, 1000, 3000, 10000):
            passes = _lower_bounds(n) >= threshold
            probability = float(binom.pmf(np.flatnonzero(passes), n, threshold).sum())
            # Spot check: the rule decides exactly as the vectorised bound says.
            for k in {
                int(np.ceil(threshold * n)),
                int(np.flatnonzero(passes)[0]) if passes.any() else n,
            }:
                decided = policy.decide(_run(k, n)).outcome == "pass"
                assert decided == bool(passes[k]), (threshold, n, k)
            rows.append({"threshold": threshold, "n": n, "pass_probability": probability})
    return rows


def _differences(
    rng: np.random.Generator, reps: int, n: int, regress: float, improve: float
) -> np.ndarray:
    draw = rng.random((reps, n))
    return np.where(draw < regress, -1.0, np.where(draw < regress + improve, 1.0, 0.0))


def at_margin(reps: int) -> list[dict[str, float]]:
    rng = np.random.default_rng(1)
    rows = []
    for regress, improve in ((0.02, 0.0), (0.05, 0.03), (0.15, 0.13)):
        margin = regress - improve
        for n in (100, 400, 1000):
            d = _differences(rng, reps, n, regress, improve)
            lower = 2.0 * bounded_mean_bounds((d + 1.0) / 2.0)[:, 0] - 1.0
            rows.append(
                {
                    "regressed": regress,
                    "improved": improve,
                    "margin": margin,
                    "n": n,
                    "pass_rate": float(np.mean(lower >= -margin)),
                }
            )
    return rows


def power(reps: int) -> list[dict[str, float]]:
    rng = np.random.default_rng(2)
    rows = []
    for regress, improve in ((0.10, 0.02), (0.06, 0.02)):
        for n in (100, 200, 400, 800, 1600):
            d = _differences(rng, reps, n, regress, improve)
            upper = 2.0 * bounded_mean_bounds((d + 1.0) / 2.0)[:, 1] - 1.0
            rows.append(
                {
                    "regressed": regress,
                    "improved": improve,
                    "margin": 0.02,
                    "n": n,
                    "flagged_fail": float(np.mean(upper < -0.02)),
                }
            )
    return rows


def clustered_coverage(reps: int) -> list[dict[str, float]]:
    rng = np.random.default_rng(3)
    rows = []
    for clusters, size in ((5, 20), (10, 20), (30, 10), (100, 5)):
        n = clusters * size
        covered = covered_iid = 0
        for _ in range(reps):
            shift = np.repeat(rng.normal(0.0, 0.15, clusters), size)
            base = np.clip(0.5 + rng.normal(0.0, 0.1, n), 0.0, 1.0)
            cand = np.clip(base + shift + rng.normal(0.0, 0.05, n), 0.0, 1.0)
            # Truth: the expected difference, estimated by a large independent draw.
            labels = [str(i // size) for i in range(n)]
            hull = paired_figures(
                base, cand, pass_fail=False, low=0.0, high=1.0, confidence=0.95, clusters=labels
            ).interval
            iid = paired_figures(
                base, cand, pass_fail=False, low=0.0, high=1.0, confidence=0.95
            ).interval
            covered += hull.contains(TRUE_CLUSTER_SHIFT)
            covered_iid += iid.contains(TRUE_CLUSTER_SHIFT)
        rows.append(
            {
                "clusters": clusters,
                "cluster_size": size,
                "coverage": covered / reps,
                "coverage_ignoring_clusters": covered_iid / reps,
            }
        )
    return rows


def _true_cluster_shift() -> float:
    rng = np.random.default_rng(99)
    m = 2_000_000
    base = np.clip(0.5 + rng.normal(0.0, 0.1, m), 0.0, 1.0)
    cand = np.clip(base + rng.normal(0.0, 0.15, m) + rng.normal(0.0, 0.05, m), 0.0, 1.0)
    return float(np.mean(cand - base))


TRUE_CLUSTER_SHIFT = _true_cluster_shift()


def readout(reps: int) -> list[dict[str, float]]:
    rng = np.random.default_rng(4)
    rows = []
    for true_rate, threshold, n in ((0.95, 0.9, 60), (0.97, 0.95, 200), (0.85, 0.9, 80)):
        decided = attempts = 0
        for _ in range(reps):
            k = int(rng.binomial(n, true_rate))
            interval = clopper_pearson(k, n)
            if interval.lower >= threshold or interval.upper < threshold:
                continue
            extra = cases_needed(k / n, threshold, n)
            if extra is None:
                continue
            attempts += 1
            total_k = k + int(rng.binomial(extra, true_rate))
            grown = clopper_pearson(total_k, n + extra)
            decided += grown.lower >= threshold or grown.upper < threshold
        rows.append(
            {
                "true_rate": true_rate,
                "threshold": threshold,
                "n": n,
                "inconclusive_runs": attempts,
                "conclusive_after_readout": decided / attempts if attempts else 0.0,
            }
        )
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--reps", type=int, default=4000)
    args = parser.parse_args()
    started = time.perf_counter()
    report: dict[str, Any] = {
        "min_rule_at_threshold": at_threshold(),
        "no_regression_at_margin": at_margin(args.reps),
        "regression_power": power(args.reps),
        "clustered_coverage": clustered_coverage(max(200, args.reps // 10)),
        "readout": readout(max(200, args.reps // 10)),
        "sequential_at_threshold": round_two.sequential_at_threshold(max(200, args.reps // 4)),
        "rules_at_threshold": round_two.rules_at_threshold(args.reps),
        "metrics_equal_releases": round_two.metrics_equal_releases(max(50, args.reps // 40)),
        "no_regression_scores_at_margin": round_two.no_regression_scores_at_margin(
            max(200, args.reps // 4)
        ),
        "sequential_plan": round_two.sequential_plan_check(max(400, args.reps // 4)),
    }
    report["seconds"] = round(time.perf_counter() - started, 1)
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "gates.json").write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    worst = max(row["pass_probability"] for row in report["min_rule_at_threshold"])
    print(f"min rule at threshold: largest pass probability {worst:.4f}")
    for row in report["no_regression_at_margin"]:
        print(
            f"no_regression at margin {row['margin']:.2f} (regressed {row['regressed']}, "
            f"improved {row['improved']}) n={row['n']}: "
            f"pass rate {row['pass_rate']:.4f}"
        )
    for row in report["regression_power"]:
        print(
            f"power regress={row['regressed']} improve={row['improved']} n={row['n']}: "
            f"{row['flagged_fail']:.3f}"
        )
    for row in report["clustered_coverage"]:
        print(
            f"clusters {row['clusters']}x{row['cluster_size']}: coverage {row['coverage']:.3f}"
            f" (ignoring clusters {row['coverage_ignoring_clusters']:.3f})"
        )
    for row in report["readout"]:
        print(
            f"readout p={row['true_rate']} t={row['threshold']} n={row['n']}: "
            f"{row['conclusive_after_readout']:.3f} conclusive of "
            f"{row['inconclusive_runs']} inconclusive runs"
        )
    for key in (
        "sequential_at_threshold",
        "rules_at_threshold",
        "metrics_equal_releases",
        "no_regression_scores_at_margin",
        "sequential_plan",
    ):
        for row in report[key]:
            print(f"{key}: " + ", ".join(f"{k} {v}" for k, v in row.items()))
    print(f"{report['seconds']} s")


if __name__ == "__main__":
    main()
