"""Coverage of the latency and cost intervals (`oloproof_core.results.measured`).

Run: .venv/bin/python -m bench.measured.coverage [--reps 10000] [--quick]
Prints one table per figure and writes bench/results/measured.json. Each row is
``reps`` simulated releases of ``n`` cases; a release covers when its 95 %
interval holds the true figure. ``miss low`` / ``miss high``: the share whose
interval lies wholly below / above the truth (each should be at most 0.025, one
tail of a 95 % interval: what a gate's false pass or false fail rests on).

The latency intervals are computed for all releases at once from the library's
ranks (`order_ranks`) and checked, release by release for the first 200, against
`quantile_interval` itself; the cost intervals are the library's own functions.
"""

from __future__ import annotations

import argparse
import json
import math
import time
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from bench.measured._worlds import CAP, CAPPED_COSTS, LATENCIES, OPEN_COSTS, Array
from bench.stats.coverage import print_table
from oloproof_core.results.measured import CaseFigures, measured_figure
from oloproof_core.stats._nonnegative_mean import (
    nonnegative_lower_bounds,
    nonnegative_mean_interval,
)
from oloproof_core.stats._quantile import order_ranks, quantile_interval

RESULTS = Path(__file__).resolve().parents[1] / "results" / "measured.json"
LEVEL = 0.95
CHECKED = 200


def _summary(lower: Array, upper: Array, truth: float) -> dict[str, Any]:
    finite = np.isfinite(upper)
    return {
        "coverage": float(np.mean((lower <= truth) & (truth <= upper))),
        "miss low": float(np.mean(upper < truth)),
        "miss high": float(np.mean(lower > truth)),
        "finite upper": float(np.mean(finite)),
        "median upper/truth": float(np.median(upper[finite]) / truth) if finite.any() else math.inf,
    }


def _failures(
    kind: str, values: Array, rng: np.random.Generator, slow: float
) -> npt.NDArray[np.bool_]:
    if kind == "5% at random":
        return rng.random(values.shape) < 0.05
    if kind == "timeouts (slowest 3%)":
        return values > slow
    return np.zeros(values.shape, dtype=bool)


def _quantile_ends(values: Array, failed: npt.NDArray[np.bool_], q: float) -> tuple[Array, Array]:
    n = values.shape[1]
    low_rank, high_rank = order_ranks(n, q, LEVEL)
    # As the library completes them: failed cases at 0 for the lower end, ∞ for the upper.
    lower = np.zeros(values.shape[0])
    if low_rank >= 1:
        lower = np.sort(np.where(failed, 0.0, values), axis=1)[:, low_rank - 1]
    upper = np.full(values.shape[0], math.inf)
    if high_rank <= n:
        upper = np.sort(np.where(failed, math.inf, values), axis=1)[:, high_rank - 1]
    for i in range(min(CHECKED, values.shape[0])):
        found = quantile_interval(values[i][~failed[i]], int(failed[i].sum()), q, LEVEL)
        assert (found.lower, found.upper) == (lower[i], upper[i]), (i, found)
    return lower, upper


def latency_rows(reps: int, ns: list[int], rng: np.random.Generator) -> list[dict[str, Any]]:
    rows = []
    for world in LATENCIES:
        for kind in ("none", "5% at random", "timeouts (slowest 3%)"):
            for n in ns:
                values = world.draw(rng, (reps, n))
                failed = _failures(kind, values, rng, world.quantile(0.97))
                for q, name in ((0.5, "p50"), (0.95, "p95")):
                    lower, upper = _quantile_ends(values, failed, q)
                    truth = world.quantile(q)
                    head = {"latencies": world.name, "failed": kind, "n": n, "figure": name}
                    rows.append({**head, **_summary(lower, upper, truth)})
    return rows


def open_cost_rows(reps: int, ns: list[int], rng: np.random.Generator) -> list[dict[str, Any]]:
    """No cap: the lower end alone (the upper is ∞); its miss rate is what matters."""
    rows = []
    for world in OPEN_COSTS:
        for n in ns:
            lower = np.concatenate(
                [
                    nonnegative_lower_bounds(world.draw(rng, (min(1000, reps - start), n)), LEVEL)
                    for start in range(0, reps, 1000)
                ]
            )
            rows.append(
                {
                    "costs": world.name,
                    "n": n,
                    "miss high": float(np.mean(lower > world.mean)),
                    "median lower/truth": float(np.median(lower) / world.mean),
                }
            )
    return rows


def capped_cost_rows(reps: int, ns: list[int], rng: np.random.Generator) -> list[dict[str, Any]]:
    rows = []
    for world in CAPPED_COSTS:
        for n in ns:
            values = world.draw(rng, (reps, n))
            ends = [nonnegative_mean_interval(row, LEVEL, cap=CAP) for row in values]
            lower = np.array([end.lower for end in ends])
            upper = np.array([end.upper for end in ends])
            rows.append({"costs": world.name, "n": n, **_summary(lower, upper, world.mean)})
    return rows


def per_success_rows(reps: int, ns: list[int], rng: np.random.Generator) -> list[dict[str, Any]]:
    """Costs capped; success 0.9 on the dearer half of cases and 0.7 on the cheaper
    (dependent on cost, p = 0.8), or 0.5 on every case."""
    world = CAPPED_COSTS[0]
    median = 0.002
    rows = []
    for label, dear, cheap in (("dependent, p=0.8", 0.9, 0.7), ("independent, p=0.5", 0.5, 0.5)):
        truth = world.mean / ((dear + cheap) / 2)
        for n in ns:
            ids = [f"case-{i}" for i in range(n)]
            costs = world.draw(rng, (reps, n))
            chance = np.where(costs > median, dear, cheap)
            wins = (rng.random((reps, n)) < chance).astype(np.float64)
            ends = [
                measured_figure(
                    CaseFigures(ids, [0.0] * n, cost.tolist(), win.tolist()),
                    "cost_per_success_usd",
                    LEVEL,
                    cap=CAP,
                ).interval
                for cost, win in zip(costs, wins, strict=True)
            ]
            lower = np.array([end.lower for end in ends])
            upper = np.array([end.upper for end in ends])
            rows.append({"success": label, "n": n, **_summary(lower, upper, truth)})
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--reps", type=int, default=10_000, help="releases per row")
    parser.add_argument("--quick", action="store_true", help="500 releases, two sizes")
    args = parser.parse_args()
    reps = 500 if args.quick else args.reps
    ns = [30, 300] if args.quick else [30, 100, 300, 1000]
    rng = np.random.default_rng(20_261_207)
    tables = {
        "latency": ("Latency p50 / p95: order-statistic interval", latency_rows),
        "cost_capped": (f"Mean cost per case, cap ${CAP:g}", capped_cost_rows),
        "cost_open": ("Mean cost per case, no cap: lower end", open_cost_rows),
        "cost_per_success": (f"Cost per success, cap ${CAP:g}", per_success_rows),
    }
    results: dict[str, Any] = {"reps": reps, "level": LEVEL}
    for key, (title, simulate) in tables.items():
        started = time.perf_counter()
        rows = simulate(reps, ns, rng)
        print_table(
            f"{title} ({reps:,} releases per row, {time.perf_counter() - started:.0f} s)", rows
        )
        results[key] = rows
    if not args.quick:
        RESULTS.write_text(json.dumps(results, indent=1) + "\n")


if __name__ == "__main__":
    main()
