"""A run of up to a million cases on the workers' path: planning, and the conclusion's memory.

    .venv/bin/python -m bench.scale [--cases 10000 100000 1000000] [--old-up-to 100000]
                                    [--postgres postgresql://postgres@127.0.0.1:5432]

For each size, a scratch PostgreSQL database (`oloproof_scale_<cases>`, dropped after)
gets a trivial run (a pass/fail metric and a score metric): its dataset recorded and its
run planned through the platform's own functions (queries and seconds counted), its
cases and verdicts written with the bulk path as finished chunks. The run is then
finalised in fresh processes: once under tracemalloc (the conclusion's peak of Python
memory), once without (seconds, resident memory before and at most). `--old-up-to` also
finalises runs up to that size reading every case whole, as finalising did before it
read value columns.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from bench._platform import drop_database, fresh_database

DEFAULT_SERVER = "postgresql://postgres@127.0.0.1:5432"


def _child(database_url: str, *arguments: str) -> dict[str, Any]:
    env = {**os.environ, "DATABASE_URL": database_url}
    completed = subprocess.run(
        [sys.executable, "-m", "bench.scale", "--child", *arguments],
        env=env, capture_output=True, text=True, check=False,
    )  # fmt: skip
    if completed.returncode != 0:
        raise SystemExit(f"bench.scale {' '.join(arguments)} failed:\n{completed.stderr}")
    return dict(json.loads(completed.stdout.strip().splitlines()[-1]))


def measure(server: str, n_cases: int, old: bool, chunk_size: int) -> dict[str, Any]:
    name = f"oloproof_scale_{n_cases}"
    url = fresh_database(server, name)
    try:
        with tempfile.TemporaryDirectory(prefix="oloproof_scale_") as folder:
            prepared = _child(url, "prepare", str(n_cases), folder, str(chunk_size))
            run_id = str(prepared["run_id"])
            row: dict[str, Any] = {"cases": n_cases, **prepared}
            row["traced"] = _child(url, "finalise", run_id, "new", "trace")
            row["plain"] = _child(url, "finalise", run_id, "new", "plain")
            if old:
                row["old_traced"] = _child(url, "finalise", run_id, "old", "trace")
                row["old_plain"] = _child(url, "finalise", run_id, "old", "plain")
    finally:
        drop_database(server, name)
    print(json.dumps(row), flush=True)
    return row


def _run_child(arguments: list[str]) -> None:
    from bench.scale import _steps

    step, *rest = arguments
    if step == "prepare":
        cases, folder, chunk_size = rest
        result = _steps.prepare(int(cases), Path(folder), int(chunk_size))
    else:
        run_id, mode, trace = rest
        result = _steps.finalise(int(run_id), old=mode == "old", trace=trace == "trace")
    print(json.dumps(result))


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.scale", description=__doc__)
    parser.add_argument("--cases", type=int, nargs="+", default=[10_000, 100_000, 1_000_000])
    parser.add_argument("--old-up-to", type=int, default=100_000)
    parser.add_argument("--chunk-size", type=int, default=500)
    parser.add_argument("--postgres", default=DEFAULT_SERVER, help="server URL, no database")
    parser.add_argument("--out", default="bench/results/scale.json")
    parser.add_argument("--child", nargs=argparse.REMAINDER, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        _run_child(args.child)
        return
    rows = [measure(args.postgres, n, n <= args.old_up_to, args.chunk_size) for n in args.cases]
    Path(args.out).write_text(json.dumps(rows, indent=2) + "\n", encoding="utf-8")
    print(f"{'cases':>9} {'plan q':>6} {'data q':>6} {'peak MB':>8} {'B/case':>7} "
          f"{'RSS +MB':>8} {'s':>6} {'old peak':>9} {'old RSS+':>9}")  # fmt: skip
    for row in rows:
        traced, plain = row["traced"], row["plain"]
        old_peak = row.get("old_traced", {}).get("peak_mb", "—")
        old_rss = row.get("old_plain", {})
        old_growth = round(old_rss["rss_max_mb"] - old_rss["rss_before_mb"]) if old_rss else "—"
        print(
            f"{row['cases']:>9} {row['planning_queries']:>6} {row['dataset_queries']:>6} "
            f"{traced['peak_mb']:>8} {traced['peak_mb'] * 2**20 / row['cases']:>7.0f} "
            f"{plain['rss_max_mb'] - plain['rss_before_mb']:>8.1f} {plain['seconds']:>6} "
            f"{old_peak:>9} {old_growth:>9}"
        )


if __name__ == "__main__":
    main()
