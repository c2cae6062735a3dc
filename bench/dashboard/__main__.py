"""Dashboard server time on a large history: runs, run, case-table, case and compare pages.

Builds, in a fresh SQLite database in a temporary data folder, 10,000 runs and one
run of 100,000 cases (see _history.py), then requests each page with Django's
test Client (signed in) and reports the median and 95th percentile of the time
from request to response.

Run: .venv/bin/python -m bench.dashboard [--repeats 30] [--runs 10000] [--cases 100000]
Writes bench/results/dashboard.json.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

RESULTS = Path(__file__).resolve().parents[1] / "results"
TARGET_MS = 150.0
COLD = "(cold) "
"""Pages named with this prefix are timed with the cache emptied before each request."""


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=30)
    parser.add_argument("--runs", type=int, default=10_000)
    parser.add_argument("--cases", type=int, default=100_000)
    args = parser.parse_args()
    data_dir = tempfile.mkdtemp(prefix="oloproof-bench-dashboard-")
    os.environ["OLOPROOF_DATA_DIR"] = data_dir
    os.environ.pop("DATABASE_URL", None)
    os.environ["DJANGO_SETTINGS_MODULE"] = "evalsite.settings"
    import django

    django.setup()
    from django.core.cache import cache
    from django.core.management import call_command
    from django.test import Client
    from django.test.utils import setup_test_environment

    from bench.dashboard._history import build_history

    setup_test_environment()
    call_command("migrate", interactive=False, verbosity=0)
    started = time.perf_counter()
    history = build_history(n_runs=args.runs, big_cases=args.cases)
    build_s = time.perf_counter() - started
    print(f"built {args.runs:,} runs and a {args.cases:,}-case run in {build_s:.1f} s", flush=True)

    from django.contrib.auth.models import User

    client = Client()
    client.force_login(User.objects.get(username="bench"))
    big, typical = history.big_run, history.typical_run
    baseline, candidate = history.compare_pair
    pages = {
        "runs: first page": "/",
        "runs: page 150": "/?page=150",
        "runs: filtered (system, gate)": "/?system=bot-2&gate=fail",
        "run: 100,000 cases": f"/runs/{big}/",
        "run: typical": f"/runs/{typical}/",
        "cases: 100,000, first page": f"/runs/{big}/cases/",
        "cases: 100,000, failed": f"/runs/{big}/cases/?outcome=failed",
        "cases: 100,000, criterion missing": (
            f"/runs/{big}/cases/?criterion=exact_label&outcome=missing"
        ),
        "cases: 100,000, page 1000": f"/runs/{big}/cases/?page=1000",
        "cases: 100,000, search": f"/runs/{big}/cases/?q=case_09999",
        "case: one of 100,000": f"/runs/{big}/cases/{history.big_case_id}",
        "compare: 2,000 vs 2,000 cases": f"/compare/?baseline={baseline}&candidate={candidate}",
        COLD + "compare: 2,000 vs 2,000 cases": (
            f"/compare/?baseline={baseline}&candidate={candidate}"
        ),
        "run: 2,000 cases, previous release, plan": f"/runs/{candidate}/",
        COLD + "run: 2,000 cases, previous release, plan": f"/runs/{candidate}/",
        "system: 40 releases": f"/systems/{history.system_id}/",
        "gates": "/gates/",
    }
    rows = []
    for name, path in pages.items():
        response = client.get(path)
        if response.status_code != 200:
            print(f"{name}: {path} answered {response.status_code}", file=sys.stderr)
            return 1
        times = []
        for _ in range(args.repeats):
            if name.startswith(COLD):
                cache.clear()
            begin = time.perf_counter()
            client.get(path)
            times.append((time.perf_counter() - begin) * 1000)
        times.sort()
        median = statistics.median(times)
        p95 = times[min(len(times) - 1, round(0.95 * (len(times) - 1)))]
        rows.append(
            {"page": name, "path": path, "median_ms": round(median, 1), "p95_ms": round(p95, 1)}
        )
        mark = "" if median < TARGET_MS else "  (over target)"
        print(f"{name:40s} median {median:7.1f} ms   p95 {p95:7.1f} ms{mark}", flush=True)
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "dashboard.json").write_text(
        json.dumps(
            {
                "database": "sqlite",
                "runs": args.runs,
                "big_run_cases": args.cases,
                "repeats": args.repeats,
                "build_s": round(build_s, 1),
                "target_median_ms": TARGET_MS,
                "pages": rows,
            },
            indent=2,
        )
        + "\n"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
