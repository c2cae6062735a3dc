"""Coverage simulations for ``oloproof_core.stats``.

Run: .venv/bin/python -m bench.stats.coverage [--reps 4000] [--quick] [--only KEY ...]
Prints one table per simulation and writes bench/results/stats_coverage.json; with
``--only`` it runs the named tables and replaces just those in the file.
"""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from . import _round_two as round_two
from . import _simulations as sims

RESULTS = Path(__file__).resolve().parents[1] / "results" / "stats_coverage.json"


def _format(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:.4f}"
    return str(value)


def print_table(title: str, rows: list[dict[str, Any]]) -> None:
    print(f"\n== {title}")
    if not rows:
        return
    columns = list(rows[0])
    cells = [[_format(row.get(column, "")) for column in columns] for row in rows]
    widths = [max(len(c), *(len(line[i]) for line in cells)) for i, c in enumerate(columns)]
    print("  ".join(c.ljust(w) for c, w in zip(columns, widths, strict=True)))
    for line in cells:
        print("  ".join(v.ljust(w) for v, w in zip(line, widths, strict=True)))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--reps", type=int, default=4000, help="replications per setting")
    parser.add_argument("--quick", action="store_true", help="few reps and sizes (smoke run)")
    parser.add_argument(
        "--only", nargs="+", metavar="KEY", help="run these tables only (keys as in the file)"
    )
    args = parser.parse_args()
    reps = 300 if args.quick else args.reps
    ns = [10, 30, 100] if args.quick else [5, 10, 20, 30, 50, 100, 300, 1000]
    gate_ns = [30, 100] if args.quick else [30, 100, 300, 1000, 3000]
    paired_ns = [10, 30, 100] if args.quick else [10, 30, 100, 300, 1000]
    clusters = [5, 10] if args.quick else [5, 10, 30, 100]

    runs: list[tuple[str, str, Callable[[], list[dict[str, Any]]]]] = [
        (
            "bounded_mean",
            "Betting interval for a bounded mean",
            lambda: sims.bounded_mean_coverage(reps, ns),
        ),
        (
            "truncation",
            "Bet truncation c = 1/2 vs 3/4 (mean width)",
            lambda: sims.truncation_comparison(reps, [10, 30, 100]),
        ),
        (
            "clopper_pearson_exact",
            "Clopper-Pearson, exact coverage over rates 0.01..0.99",
            lambda: sims.clopper_pearson_exact_coverage(paired_ns),
        ),
        (
            "gate_at_threshold",
            "Gate passes with the truth exactly at the threshold",
            lambda: sims.gate_at_threshold(reps, gate_ns),
        ),
        (
            "paired_proportion",
            "Paired pass-rate difference (betting vs comparisons)",
            lambda: sims.paired_proportion_coverage(reps, paired_ns),
        ),
        (
            "paired_score",
            "Paired score difference (betting)",
            lambda: sims.paired_score_coverage(reps, paired_ns),
        ),
        (
            "missing_not_at_random",
            "Failures missing more often: bounded vs dropped",
            lambda: sims.missing_not_at_random(reps, paired_ns),
        ),
        (
            "clustered",
            "Clustered data: CR1 (asymptotic) vs i.i.d. betting",
            lambda: sims.clustered_coverage(reps, clusters),
        ),
        ("order", "Same cases, 50 orders", lambda: round_two.order_invariance()),
        (
            "few_clusters",
            "Few clusters at ICC 0.5: betting on cluster means vs CR1",
            lambda: round_two.few_clusters(
                max(200, reps // 4), [5, 10] if args.quick else [5, 10, 30]
            ),
        ),
        (
            "paired_widths",
            "Paired score differences: width / paired-t width, coverage",
            lambda: round_two.paired_widths(max(300, reps // 2), [30, 100, 150, 200, 400]),
        ),
        ("coherence", "Compare row: p-value vs interval", lambda: round_two.coherence()),
        (
            "missing_scores",
            "Low scores missing more often: bounded vs dropped (single and paired)",
            lambda: round_two.missing_scores(max(200, reps // 4), [30, 100, 300]),
        ),
        ("power", "Planned cases for 80 % power", lambda: round_two.power_check(reps)),
    ]
    if args.only:
        unknown = sorted(set(args.only) - {key for key, _, _ in runs})
        if unknown:
            parser.error(
                f"no table {', '.join(unknown)}; the tables: {', '.join(k for k, _, _ in runs)}"
            )
        runs = [entry for entry in runs if entry[0] in args.only]
    results: dict[str, Any] = {"reps": reps, "confidence": 1 - sims.ALPHA}
    if args.only and RESULTS.exists():
        recorded = json.loads(RESULTS.read_text(encoding="utf-8"))
        if recorded.get("reps") != reps:
            # One file, one number of replications: its tables stay comparable.
            parser.error(f"{RESULTS.name} holds --reps {recorded.get('reps')}; pass the same")
        results = {**recorded, **results}
    for key, title, run in runs:
        start = time.perf_counter()
        rows = run()
        print_table(f"{title}  [{time.perf_counter() - start:.1f} s]", rows)
        results[key] = rows
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
    print(f"\nwrote {RESULTS}")


if __name__ == "__main__":
    main()
