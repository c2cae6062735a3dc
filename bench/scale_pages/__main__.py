"""Server time of the dashboard's pages at a million cases, against the real server.

Seeds a scratch PostgreSQL database (`oloproof_pages_<n>`) with 10,000 runs and two
runs of 1,000,000 cases on one dataset (bench/scale_pages/_seed.py), starts
`oloproof serve --no-worker` on it with `OLOPROOF_SERVER_TIMING=1` (the app then adds
`Server-Timing: app;dur=<ms>` to each response: the time from the first middleware to
the response, the network and the client left out), signs in over HTTP and requests
each page in turns, ~100 times each (bench/scale_pages/_measure.py). Prints and writes
p50 and p99 per page to bench/results/scale_pages.json.

Run: .venv/bin/python -m bench.scale_pages [--cases 1000000] [--runs 10000]
     [--repeats 100] [--postgres postgresql://postgres@127.0.0.1:5432]
     [--reuse DATA_FOLDER]   (measure again on the store an earlier run seeded)
     [--seed-only] [--only TEXT] [--drop] [--out bench/results/scale_pages.json]
The database and the data folder are kept for --reuse unless --drop (after measuring).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

RESULTS = Path(__file__).resolve().parents[1] / "results"
PREFIX = "oloproof_pages_"


def _environment(data_dir: str, database_url: str) -> None:
    os.environ["OLOPROOF_DATA_DIR"] = data_dir
    os.environ["DATABASE_URL"] = database_url
    os.environ["DJANGO_SETTINGS_MODULE"] = "evalsite.settings"


def seed_store(args: argparse.Namespace) -> str:
    """A fresh database and data folder with the history in them; returns the folder."""
    from bench._platform import fresh_database

    data_dir = tempfile.mkdtemp(prefix="oloproof-bench-pages-")
    name = f"{PREFIX}{args.cases}"
    _environment(data_dir, fresh_database(args.postgres, name))
    import django

    django.setup()
    from django.core.management import call_command

    from bench.scale_pages._seed import seed

    call_command("migrate", interactive=False, verbosity=0)
    started = time.perf_counter()
    seeded = seed(n_runs=args.runs, large_cases=args.cases)
    with django.db.connection.cursor() as cursor:
        cursor.execute("ANALYZE")
    seconds = time.perf_counter() - started
    print(f"seeded in {seconds:.0f} s: {data_dir}", flush=True)
    saved = {
        **dataclasses.asdict(seeded),
        "database_url": os.environ["DATABASE_URL"],
        "seed_s": round(seconds),
    }
    (Path(data_dir) / "seeded.json").write_text(json.dumps(saved, indent=2))
    return data_dir


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=1_000_000)
    parser.add_argument("--runs", type=int, default=10_000)
    parser.add_argument("--repeats", type=int, default=100)
    parser.add_argument("--postgres", default="postgresql://postgres@127.0.0.1:5432")
    parser.add_argument("--reuse", default="", help="the data folder of an earlier seeding")
    parser.add_argument("--seed-only", action="store_true")
    parser.add_argument("--only", default="", help="measure only pages whose name has this")
    parser.add_argument("--drop", action="store_true", help="drop the store after measuring")
    parser.add_argument("--out", default=str(RESULTS / "scale_pages.json"))
    args = parser.parse_args()
    data_dir = args.reuse or seed_store(args)
    if args.seed_only:
        return 0
    from bench.scale_pages._measure import measure_pages

    saved = json.loads((Path(data_dir) / "seeded.json").read_text())
    report = measure_pages(data_dir=data_dir, seeded=saved, repeats=args.repeats, only=args.only)
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(report, indent=2) + "\n")
    if args.drop:
        from bench._platform import drop_database

        drop_database(args.postgres, saved["database_url"].rsplit("/", 1)[1])
        shutil.rmtree(data_dir, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
