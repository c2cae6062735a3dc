"""The statistics of repeats: coverage and width of a repeated run's intervals against
Inspect AI's epochs reducer, adaptive repeats on the release figure (simulated, and the
best unbiased two-phase plan in closed form), comparisons of releases run at different
repeat counts, what repeats cost in wall time, and `repeats: auto` against uniform
repeats.

Run: .venv/bin/python -m bench.repeats [--reps 10000] [--quick] [--only PART ...]
Prints one table per part and writes bench/results/repeats.json; with `--only` (parts:
coverage, adaptive, two_phase, sequential, compare_counts, wall_time, auto) it runs
those parts and replaces just them in the file.
"""

from __future__ import annotations

import argparse
import json
import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bench.repeats._adaptive import adaptive_rows
from bench.repeats._auto import auto_rows
from bench.repeats._auto_chain import chain_rows, long_run_rows
from bench.repeats._compare_counts import COUNTS, compare_counts_cell
from bench.repeats._coverage import cell
from bench.repeats._population import POPULATIONS
from bench.repeats._sequential import sequential_rows
from bench.repeats._two_phase import two_phase_rows
from bench.repeats._wall_time import measure
from bench.stats.coverage import print_table

RESULTS = Path(__file__).resolve().parents[1] / "results" / "repeats.json"
PARTS = ("coverage", "adaptive", "two_phase", "sequential", "compare_counts", "wall_time", "auto")


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


def _coverage(reps: int, sizes: list[int]) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    started = time.perf_counter()
    for p_index, population in enumerate(POPULATIONS):
        found = []
        for n in sizes:
            for k in (1, 3, 5, 10):
                found += cell(population, n, k, reps, seed=1_000 * p_index + 10 * n + k)
        seconds = time.perf_counter() - started
        print_table(f"{population.name}  [{seconds:.0f} s so far]", [_flat(r) for r in found])
        rows += found
    return rows


def _adaptive(reps: int, sizes: list[int]) -> list[dict[str, Any]]:
    rows = []
    for p_index, population in enumerate(POPULATIONS):
        for n in sizes:
            rows += adaptive_rows(population, n, reps, seed=2_000 + 1_000 * p_index + n)
    print_table("Adaptive repeats (2 tries, 8 more when they disagree)", rows)
    return rows


def _two_phase() -> list[dict[str, Any]]:
    rows = [row for population in POPULATIONS for row in two_phase_rows(population)]
    print_table("Unbiased two-phase plans at 2.5 calls a case, variance per case", rows)
    return rows


def _sequential(reps: int) -> list[dict[str, Any]]:
    rows = []
    for p_index, population in enumerate(POPULATIONS):
        for k in (3, 5):
            rows += sequential_rows(population, k, reps, seed=3_000 + 10 * p_index + k)
    print_table("A sequential gate on repeated cases: the running interval on case means", rows)
    return rows


def _compare_counts(reps: int, sizes: list[int]) -> list[dict[str, Any]]:
    rows = [
        compare_counts_cell(population, n, counts, regressed, reps, seed=hash_seed)
        for hash_seed, (population, n, counts, regressed) in enumerate(
            (population, n, counts, regressed)
            for population in POPULATIONS
            for n in sizes
            for counts in COUNTS
            for regressed in (False, True)
        )
    ]
    print_table(
        "Releases compared at different repeat counts (pairs of case means)",
        [
            {
                "population": row["population"][:14],
                "cases": row["cases"],
                "repeats": row["repeats"],
                "release": row["release"],
                "truth": row["truth"],
                "engine cov": row["engine"]["coverage"],
                "engine width": row["engine"]["mean_width"],
                "normal cov": row["normal"]["coverage"],
                "normal width": row["normal"]["mean_width"],
            }
            for row in rows
        ],
    )
    return rows


def _wall_time(quick: bool) -> list[dict[str, Any]]:
    rows = measure([3, 5] if quick else [3, 5, 10], 1 if quick else 3)
    print_table("Wall time: one run with repeats k against k separate runs", rows)
    return rows


def _auto_flat(row: dict[str, Any]) -> dict[str, Any]:
    auto, uniform_5 = row["auto"], row["uniform 5"]
    return {
        "population": row["population"][:14],
        "cases": row["cases"],
        "variant": row["variant"],
        "truth": row["truth"],
        "auto cov": auto["coverage"],
        "auto cov own": row["own_mean_coverage"]["auto"],
        "k=5 cov": uniform_5["coverage"],
        "k=2 cov": row["uniform 2"]["coverage"],
        "auto width": auto["mean_width"],
        "k=5 width": uniform_5["mean_width"],
        "auto / k=5": row["auto_width_ratio"]["ratio"],
        "k=2 / k=5": row["uniform_2_width_ratio"]["ratio"],
        "auto calls": row["auto_calls_per_case"],
        "share of k=5": row["auto_calls_share"],
        "gap": f"{row['checked_gap']:.0e}",
    }


def _chain_flat(row: dict[str, Any]) -> dict[str, Any]:
    auto, uniform_5 = row["auto"], row["uniform 5"]
    return {
        "population": row["population"][:14],
        "cases": row["cases"],
        "run": row["run"],
        "auto cov": auto["coverage"],
        "auto cov own": row["own_mean_coverage"]["auto"],
        "k=5 cov": uniform_5["coverage"],
        "auto width": auto["mean_width"],
        "k=5 width": uniform_5["mean_width"],
        "auto / k=5": row["auto_width_ratio"]["ratio"],
        "se": row["auto_width_ratio"]["se"],
        "auto calls": row["auto_calls_per_case"],
        "share of k=5": row["auto_calls_share"],
        "cases once": row["cases_once_share"],
        "gap": f"{row['checked_gap']:.0e}",
    }


def _auto(reps: int, sizes: list[int]) -> list[dict[str, Any]]:
    rows = []
    for p_index, population in enumerate(POPULATIONS):
        for n in sizes:
            rows += auto_rows(population, n, reps, seed=4_000 + 1_000 * p_index + n)
    print_table(
        "repeats: auto (1 try for cases stable in an earlier run, 5 for the rest)",
        [_auto_flat(row) for row in rows],
    )
    chain = []
    for p_index, population in enumerate(POPULATIONS):
        for n in sizes:
            chain += chain_rows(population, n, reps, seed=5_000 + 1_000 * p_index + n)
    print_table(
        "repeats: auto run after run on one unchanged release (runs 2-6 after a first auto run)",
        [_chain_flat(row) for row in chain],
    )
    settled = [
        row
        for p_index, population in enumerate(POPULATIONS)
        for row in long_run_rows(population, seed=6_000 + p_index)
    ]
    print_table(
        "repeats: auto run after run, width / uniform 5 from the variance formula",
        [{**row, "population": row["population"][:14]} for row in settled],
    )
    return rows + chain + settled


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--reps", type=int, default=10_000, help="releases per cell")
    parser.add_argument("--quick", action="store_true", help="few releases and sizes")
    parser.add_argument("--only", nargs="+", choices=PARTS, help="run these parts only")
    args = parser.parse_args()
    reps = 300 if args.quick else args.reps
    sizes = [30, 100] if args.quick else [30, 100, 300, 1000]
    parts: dict[str, Callable[[], list[dict[str, Any]]]] = {
        "coverage": lambda: _coverage(reps, sizes),
        "adaptive": lambda: _adaptive(reps, sizes),
        "two_phase": _two_phase,
        "sequential": lambda: _sequential(reps),
        "compare_counts": lambda: _compare_counts(reps, sizes),
        "wall_time": lambda: _wall_time(args.quick),
        "auto": lambda: _auto(reps, [100] if args.quick else [100, 300, 1000]),
    }
    results: dict[str, Any] = {}
    if args.only and RESULTS.exists():
        results = json.loads(RESULTS.read_text(encoding="utf-8"))
    for name in args.only or PARTS:
        started, load = time.perf_counter(), os.getloadavg()
        results[name] = parts[name]()
        results[f"{name}_run"] = {
            "releases_per_cell": None if name == "wall_time" else reps,
            "seconds": round(time.perf_counter() - started, 1),
            "load_before": load,
            "load_after": os.getloadavg(),
        }
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
    print(f"\nwrote {RESULTS}")


if __name__ == "__main__":
    main()
