"""Runs at scale on real Celery workers, Redis and PostgreSQL: throughput, memory, faults.

    .venv/bin/python -m bench.scale_workers --io [--io-cases 100000] [--io-workers 1 2 4 8]
    .venv/bin/python -m bench.scale_workers --trivial [--trivial-cases 1000000] \
        [--trivial-workers 1 2 4]
    .venv/bin/python -m bench.scale_workers --faults [--fault-cases 1000000]
    .venv/bin/python -m bench.scale_workers --planning

`--io`: an async system whose every case sleeps 50 ms, 50 cases at a time per chunk
(`concurrency: 50`), chunks of 1,000. `--trivial`: a sync system that returns its input,
chunks of 5,000. Each worker is `oloproof worker --concurrency 1`; the workers answer a
ping before the run is submitted. `--faults`: the trivial run on 2 workers and a private
redis-server; once `--fault-at` of its chunks are done, one worker is SIGKILLed and the
broker restarted empty; the run must still succeed with every case recorded once.
`--planning`: statements sent by submission and planning at two sizes.

Every measurement runs in a process of its own on a scratch PostgreSQL database
(`oloproof_scale_workers_*`, dropped after) with its dataset in a temporary folder.
Results are merged into bench/results/scale_workers.json (or the file given by `--out`).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

RESULTS = Path(__file__).resolve().parents[2] / "bench" / "results" / "scale_workers.json"


def _child(spec: dict[str, Any]) -> Any:
    completed = subprocess.run(
        [sys.executable, "-m", "bench.scale_workers", "--child", json.dumps(spec)],
        capture_output=True,
        text=True,
        check=False,
    )
    if completed.returncode != 0:
        raise SystemExit(f"measurement {spec} failed:\n{completed.stderr[-6000:]}")
    return json.loads(completed.stdout.strip().splitlines()[-1])


def _load_average() -> list[float]:
    return [round(value, 2) for value in os.getloadavg()]


def _series(args: argparse.Namespace, kind: str) -> dict[str, Any]:
    cases, counts, chunk, concurrency = {
        "io": (args.io_cases, args.io_workers, args.io_chunk, 50),
        "trivial": (args.trivial_cases, args.trivial_workers, args.trivial_chunk, None),
    }[kind]
    rows = []
    for workers in counts:
        spec = {**_common(args), "kind": kind, "workers": workers, "cases": cases}
        before = _load_average()
        row = _child({**spec, "chunk": chunk, "concurrency": concurrency})
        rows.append(
            {"workers": workers, **row, "load_before": before, "load_after": _load_average()}
        )
        _print_row(kind, rows[-1])
    rows = _merged(Path(args.out), kind, cases, chunk, rows)
    base = next((row for row in rows if row["workers"] == 1), None)
    for row in rows:
        row["efficiency"] = (
            None
            if base is None
            else round(row["cases_per_s"] / (row["workers"] * base["cases_per_s"]), 2)
        )
    return {"cases": cases, "chunk_size": chunk, "concurrency": concurrency, "runs": rows}


def _merged(
    results: Path, kind: str, cases: int, chunk: int, rows: list[dict[str, Any]]
) -> list[dict[str, Any]]:
    """These rows with those of an earlier call on the same cases and chunks, by workers."""
    earlier = json.loads(results.read_text()).get(kind) if results.exists() else None
    if not earlier or (earlier["cases"], earlier["chunk_size"]) != (cases, chunk):
        return rows
    measured = {row["workers"] for row in rows}
    kept = [row for row in earlier["runs"] if row["workers"] not in measured]
    return sorted(kept + rows, key=lambda row: row["workers"])


def _faults(args: argparse.Namespace) -> dict[str, Any]:
    spec = {
        **_common(args),
        "kind": "trivial",
        "workers": 2,
        "cases": args.fault_cases,
        "chunk": args.trivial_chunk,
        "faults": True,
        "fault_at": args.fault_at,
        "stale_after": 30,
        "sweep_interval": 10,
    }
    before = _load_average()
    row = _child(spec)
    row.update(
        load_before=before, load_after=_load_average(), stale_after_s=30, sweep_interval_s=10
    )
    _print_row("faults", row)
    return {"cases": args.fault_cases, "chunk_size": args.trivial_chunk, **row}


def _common(args: argparse.Namespace) -> dict[str, Any]:
    return {"postgres": args.postgres, "redis": args.redis}


def _print_row(kind: str, row: dict[str, Any]) -> None:
    print(
        f"{kind}: {row.get('workers', 2)} workers  {row['seconds']:.1f} s  "
        f"{row['cases_per_s']:.0f} cases/s  phases {row['phases_s']}  "
        f"rss {row['worker_peak_rss_mb']} MB  finalising {row['finalising_rss_mb']}  "
        f"rows {row['case_rows']} distinct {row['distinct_case_ids']}  "
        f"attempts {row['chunk_attempts']}/{row['chunks']}  faults {row['faults']}",
        flush=True,
    )


def _save(update: dict[str, Any], results: Path) -> None:
    report = json.loads(results.read_text()) if results.exists() else {}
    report.update(update, cpus=os.cpu_count())
    results.parent.mkdir(parents=True, exist_ok=True)
    results.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")


def _arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m bench.scale_workers", description=__doc__)
    parser.add_argument("--io", action="store_true")
    parser.add_argument("--io-cases", type=int, default=100_000)
    parser.add_argument("--io-workers", type=int, nargs="+", default=[1, 2, 4, 8])
    parser.add_argument("--io-chunk", type=int, default=1_000)
    parser.add_argument("--trivial", action="store_true")
    parser.add_argument("--trivial-cases", type=int, default=1_000_000)
    parser.add_argument("--trivial-workers", type=int, nargs="+", default=[1, 2, 4])
    parser.add_argument("--trivial-chunk", type=int, default=5_000)
    parser.add_argument("--faults", action="store_true")
    parser.add_argument("--fault-cases", type=int, default=1_000_000)
    parser.add_argument("--fault-at", type=float, default=0.3, help="share of chunks done")
    parser.add_argument("--planning", action="store_true")
    parser.add_argument("--planning-sizes", type=int, nargs=2, default=[1_000, 50_000])
    parser.add_argument("--postgres", default="postgresql://postgres@127.0.0.1:5432")
    parser.add_argument("--redis", default="redis://127.0.0.1:6379/9")
    parser.add_argument("--out", default=str(RESULTS), help="the JSON file results merge into")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    return parser.parse_args()


def main() -> None:
    args = _arguments()
    if args.child:
        spec = json.loads(args.child)
        if spec["kind"] == "planning":
            from bench.scale_workers._planning import count_statements

            print(json.dumps(count_statements(spec)))
        else:
            from bench.scale_workers._measure import measure

            print(json.dumps(measure(spec)))
        return
    if args.planning:
        spec = {**_common(args), "kind": "planning", "sizes": args.planning_sizes, "chunk": 500}
        rows = _child(spec)
        print(json.dumps(rows, indent=1), flush=True)
        _save({"planning": rows}, Path(args.out))
    for kind in ("io", "trivial"):
        if getattr(args, kind):
            _save({kind: _series(args, kind)}, Path(args.out))
    if args.faults:
        _save({"faults": _faults(args)}, Path(args.out))


if __name__ == "__main__":
    main()
