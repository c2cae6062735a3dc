"""Dashboard server time on a large history: every page of the URL conf, and variants.

Builds, in a fresh SQLite database in a temporary data folder (or a fresh PostgreSQL
database with --postgres URL), 10,000 runs and one run of 100,000 cases (see
_history.py), then requests each page with Django's test Client (signed in) and
reports the median and 95th percentile of the time from request to rendered response,
and the median's ratio to a floor requested in turns with it (the sign-in page: no
query of the history), since the shared machine's load moves every figure.

The pages are every route of `runs.views.urls` that answers a GET, its parameters filled
from the built history (so a page added to the URL conf is measured without editing
this file; a route whose parameter has no value here is listed as not measured),
plus the query variants in `variants` (filters, search, deep pages, a comparison first
and cached). With --profile, each page over the target is profiled once and its most
expensive calls printed.

Run: .venv/bin/python -m bench.dashboard [--repeats 30] [--runs 10000] [--cases 100000]
     [--postgres postgresql://postgres@127.0.0.1:5432] [--profile] [--only TEXT]
     [--reuse DATA_FOLDER]   (the store of an earlier run, which printed its folder)
Writes bench/results/dashboard.json.
"""

from __future__ import annotations

import argparse
import cProfile
import dataclasses
import io
import json
import os
import pstats
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

RESULTS = Path(__file__).resolve().parents[1] / "results"
TARGET_MS = 150.0
FLOOR_PATH = "/accounts/login/"
"""A page with no query of the history, requested in turns with each page: what the
machine and Django cost at that moment (the shared machine's load moves every figure)."""
COLD = "(cold) "
"""Pages named with this prefix are timed with the cache emptied before each request."""


def variants(history: Any) -> dict[str, str]:
    """Query variants of the URL conf's pages that a user meets on a large history."""
    big = history.big_run
    baseline, candidate = history.compare_pair
    compare = f"/compare/?baseline={baseline}&candidate={candidate}"
    return {
        "runs: page 150": "/?page=150",
        "runs: filtered (system, gate)": "/?system=bot-2&gate=fail",
        "run: typical (50 cases)": f"/runs/{history.typical_run}/",
        "cases: only failed": f"/runs/{big}/cases/?outcome=failed",
        "cases: one criterion's missing": (
            f"/runs/{big}/cases/?criterion=exact_label&outcome=missing"
        ),
        "cases: page 1,000": f"/runs/{big}/cases/?page=1000",
        "cases: text search": f"/runs/{big}/cases/?q=case_09999",
        "compare: 2,000 vs 2,000 cases (cached)": compare,
        COLD + "compare: 2,000 vs 2,000 cases (first view)": compare,
        "run: 2,000 cases, previous release, plan (cached)": f"/runs/{candidate}/",
        COLD + "run: 2,000 cases, previous release, plan (first view)": f"/runs/{candidate}/",
    }


def url_conf_pages(history: Any) -> tuple[dict[str, str], list[str]]:
    """(name -> path) of every route of runs.views.urls, filled from the history; and those
    not filled."""
    from django.urls import reverse

    from runs.views.urls import app_name, urlpatterns

    values: dict[str, Any] = {
        "run_id": history.big_run,
        "case_id": history.big_case_id,
        "system_id": history.system_id,
        "optimization_id": history.optimization_id,
    }
    pages: dict[str, str] = {}
    unfilled: list[str] = []
    for pattern in urlpatterns:
        name = str(getattr(pattern, "name", "") or pattern.pattern)
        params = list(getattr(pattern.pattern, "converters", {}))
        missing = [param for param in params if param not in values]
        if missing:
            unfilled.append(f"{name} (no value for {', '.join(missing)})")
            continue
        path = reverse(f"{app_name}:{name}", kwargs={param: values[param] for param in params})
        pages[f"{name}: {path}"] = path
    return pages, unfilled


def timed(client: Any, path: str, repeats: int, *, cold: bool) -> tuple[list[float], list[float]]:
    """Sorted times of `path` and of the floor page, requested in turns (same moments)."""
    from django.core.cache import cache

    from runs.selectors.comparison import recent_comparisons_clear

    times, floors = [], []
    for _ in range(repeats):
        begin = time.perf_counter()
        client.get(FLOOR_PATH)
        floors.append((time.perf_counter() - begin) * 1000)
        if cold:
            # A first view: nothing in the shared cache, nor among the comparisons this
            # process keeps at hand.
            cache.clear()
            recent_comparisons_clear()
        begin = time.perf_counter()
        client.get(path)
        times.append((time.perf_counter() - begin) * 1000)
    return sorted(times), sorted(floors)


def profile(client: Any, path: str, *, cold: bool) -> str:
    """Where one request's time goes: the project's own calls, then its slowest queries."""
    from django.core.cache import cache
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from runs.selectors.comparison import recent_comparisons_clear

    if cold:
        cache.clear()
        recent_comparisons_clear()
    profiler = cProfile.Profile()
    with CaptureQueriesContext(connection) as queries:
        profiler.runcall(client.get, path)
    out = io.StringIO()
    stats = pstats.Stats(profiler, stream=out).sort_stats("cumulative")
    stats.print_stats(r"/(runs|metrics|oloproof_core)/", 20)
    total_s = sum(float(query["time"]) for query in queries.captured_queries)
    out.write(f"{len(queries)} queries, {total_s * 1000:.0f} ms in the database; slowest:\n")
    slowest = sorted(queries.captured_queries, key=lambda query: -float(query["time"]))[:5]
    for query in slowest:
        out.write(f"  {float(query['time']) * 1000:7.1f} ms  {query['sql'][:300]}\n")
    return out.getvalue()


def history_load(data_dir: str) -> Any:
    from bench.dashboard._history import History

    saved = json.loads((Path(data_dir) / "history.json").read_text())
    saved["compare_pair"] = tuple(saved["compare_pair"])
    return History(**saved)


def setup(args: argparse.Namespace) -> str:
    data_dir = args.reuse or tempfile.mkdtemp(prefix="oloproof-bench-dashboard-")
    os.environ["OLOPROOF_DATA_DIR"] = data_dir
    os.environ.pop("DATABASE_URL", None)
    if args.postgres:
        from bench._platform import fresh_database

        # Kept after the run, so --reuse (with the same --postgres) measures it again.
        name = "oloproof_bench_dashboard"
        server = args.postgres.rstrip("/")
        os.environ["DATABASE_URL"] = (
            f"{server}/{name}" if args.reuse else fresh_database(args.postgres, name)
        )
    os.environ["DJANGO_SETTINGS_MODULE"] = "evalsite.settings"
    import django

    django.setup()
    from django.core.management import call_command
    from django.test.utils import setup_test_environment

    setup_test_environment()
    call_command("migrate", interactive=False, verbosity=0)
    return data_dir


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=30)
    parser.add_argument("--runs", type=int, default=10_000)
    parser.add_argument("--cases", type=int, default=100_000)
    parser.add_argument("--postgres", default="", help="a PostgreSQL server URL (default SQLite)")
    parser.add_argument("--profile", action="store_true", help="profile the pages over target")
    parser.add_argument("--only", default="", help="measure only pages whose name contains this")
    parser.add_argument("--reuse", default="", help="the data folder of an earlier run's store")
    args = parser.parse_args()
    data_dir = setup(args)
    from django.contrib.auth.models import User
    from django.test import Client

    from bench.dashboard._history import build_history

    started = time.perf_counter()
    if args.reuse:
        history = history_load(data_dir)
    else:
        history = build_history(n_runs=args.runs, big_cases=args.cases)
        (Path(data_dir) / "history.json").write_text(json.dumps(dataclasses.asdict(history)))
    build_s = time.perf_counter() - started
    print(f"{args.runs:,} runs and a {args.cases:,}-case run in {build_s:.1f} s ({data_dir})")
    client = Client()
    client.force_login(User.objects.get(username="bench"))
    found, unfilled = url_conf_pages(history)
    pages = {**found, **variants(history)}
    rows, skipped, over = [], [], []
    for name, path in pages.items():
        if args.only and args.only not in name:
            continue
        response = client.get(path)
        if response.status_code != 200:
            skipped.append(f"{name} (GET answered {response.status_code})")
            continue
        if response.streaming:
            # A download's first bytes say nothing of its cost; the exports have benches
            # of their own (bench.dashboard.cases, bench.dashboard.compare).
            skipped.append(f"{name} (a streamed download)")
            continue
        times, floors = timed(client, path, args.repeats, cold=name.startswith(COLD))
        median, floor = statistics.median(times), statistics.median(floors)
        p95 = times[min(len(times) - 1, round(0.95 * (len(times) - 1)))]
        rows.append(
            {
                "page": name,
                "path": path,
                "median_ms": round(median, 1),
                "p95_ms": round(p95, 1),
                "floor_median_ms": round(floor, 1),
                "over_floor": round(median / floor, 1),
            }
        )
        mark = "" if median <= TARGET_MS else "  (over target)"
        if mark:
            over.append((name, path))
        print(
            f"{name:50s} median {median:7.1f} ms  p95 {p95:7.1f} ms  "
            f"floor {floor:5.1f} ms  {median / floor:5.1f}x{mark}",
            flush=True,
        )
    for line in unfilled + skipped:
        print(f"not measured: {line}")
    if args.profile:
        for name, path in over:
            report = profile(client, path, cold=name.startswith(COLD))
            print(f"\n--- profile of {name} ---\n{report}")
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "dashboard.json").write_text(
        json.dumps(
            {
                "database": "postgresql" if args.postgres else "sqlite",
                "runs": args.runs,
                "big_run_cases": args.cases,
                "repeats": args.repeats,
                "build_s": round(build_s, 1),
                "target_median_ms": TARGET_MS,
                "pages": rows,
                "not_measured": unfilled + skipped,
            },
            indent=2,
        )
        + "\n"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
