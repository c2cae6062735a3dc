"""The statistics of repeats: coverage and width of a repeated run's intervals against
Inspect AI's epochs reducer, and what repeats cost in wall time.

Run: .venv/bin/python -m bench.repeats [--reps 10000] [--quick] [--skip-wall-time]
Prints one table per part and writes bench/results/repeats.json.
"""

from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path
from typing import Any

from bench.repeats._coverage import cell
from bench.repeats._population import POPULATIONS
from bench.repeats._wall_time import measure
from bench.stats.coverage import print_table

RESULTS = Path(__file__).resolve().parents[1] / "results" / "repeats.json"


def _flat(row: dict[str, Any]) -> dict[str, Any]:
    engine, inspect = row["engine"], row["inspect"]
    return {
        "cases": row["cases"],
        "k": row["k"],
        "figure": row["figure"],
        "truth": row["truth"],
        "engine cov": engine["coverage"],
        "engine width": engine["mean_width"],
        "inspect cov": inspect["coverage"],
        "inspect width": inspect["mean_width"],
        "inspect miss low": inspect["miss_low"],
        "inspect miss high": inspect["miss_high"],
        "gap": f"{row['checked_gap']:.0e}",
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--reps", type=int, default=10_000, help="releases per cell")
    parser.add_argument("--quick", action="store_true", help="few releases and sizes")
    parser.add_argument("--skip-wall-time", action="store_true", help="coverage only")
    args = parser.parse_args()
    reps = 300 if args.quick else args.reps
    sizes = [30, 100] if args.quick else [30, 100, 300, 1000]
    ks = [1, 3, 5, 10]
    results: dict[str, Any] = {"reps": reps, "confidence": 0.95, "load_before": os.getloadavg()}
    started = time.perf_counter()
    for p_index, population in enumerate(POPULATIONS):
        rows = []
        for n in sizes:
            for k in ks:
                rows += cell(population, n, k, reps, seed=1_000 * p_index + 10 * n + k)
        print_table(
            f"{population.name}  [{time.perf_counter() - started:.0f} s so far]",
            [_flat(r) for r in rows],
        )
        results.setdefault("coverage", []).extend(rows)
    results["coverage_seconds"] = round(time.perf_counter() - started, 1)
    if not args.skip_wall_time:
        wall = measure([3, 5] if args.quick else [3, 5, 10], 1 if args.quick else 3)
        print_table("Wall time: one run with repeats k against k separate runs", wall)
        results["wall_time"] = wall
    results["load_after"] = os.getloadavg()
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
    print(f"\nwrote {RESULTS}")


if __name__ == "__main__":
    main()
