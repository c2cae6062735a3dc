"""Compare page, case grid and export at two runs of 100,000 cases each.

Builds, in a fresh SQLite database in a temporary data folder, one dataset of
100,000 cases in 997 clusters and two runs of it (two pass/fail criteria each,
about 2 % missing, 10 % and 7 % failed), then requests with Django's test Client
(signed in as a viewer of the project) the compare page with the cache emptied and
this process's recent comparisons forgotten before each request (a first compare),
the grid's pages with the comparison cached, the API's page of compared cases and
the whole CSV export, and reports the median and 95th percentile. As a floor in the
same run it times the comparison built the way the page built it before (whole
results read back, then `compare_runs`).

Run: .venv/bin/python -m bench.dashboard.compare [--repeats 10] [--cases 100000]
Writes bench/results/compare.json.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

RESULTS = Path(__file__).resolve().parents[1] / "results"
TARGET_MS = 150.0


def _build(n_cases: int) -> tuple[int, int]:
    from django.contrib.auth.models import User
    from django.db import transaction

    from bench.dashboard._history import _cases, _dataset, _estimates, value_columns_keep
    from runs.access import LOCAL
    from runs.models import Release, Run, System
    from runs.writers.projects import membership_set, project_default_ensure

    rng = random.Random(20261201)
    project = project_default_ensure()
    user = User.objects.create_user(username="bench", password="bench-password-long")
    membership_set(by=LOCAL, project=project, user=user, role="viewer")
    bot = System.objects.create(project=project, name="bot")
    dataset = _dataset("e" * 64, n_cases)
    pair = []
    for version, fail_rate in (("1", 0.10), ("2", 0.07)):
        run = Run.objects.create(
            project=project,
            release=Release.objects.create(system=bot, version=version),
            dataset=dataset,
            status="succeeded",
            cases_total=n_cases,
            cases_done=n_cases,
        )
        with transaction.atomic():
            _cases(run, n_cases, rng, fail_rate=fail_rate)
            type(run).objects.filter(pk=run.pk).update(finished_at=run.created_at)
            from metrics.models import MetricEstimate

            MetricEstimate.objects.bulk_create(_estimates(run.pk, rng, n_cases)[:2])
            value_columns_keep(run)
        pair.append(run.pk)
    return pair[0], pair[1]


def _timed(action: Callable[[], Any], repeats: int, before: Callable[[], None]) -> list[float]:
    times = []
    for _ in range(repeats):
        before()
        begin = time.perf_counter()
        action()
        times.append((time.perf_counter() - begin) * 1000)
    return sorted(times)


def _row(name: str, times: list[float]) -> dict[str, Any]:
    median = statistics.median(times)
    p95 = times[min(len(times) - 1, round(0.95 * (len(times) - 1)))]
    mark = "" if median <= TARGET_MS else "  (over target)"
    print(f"{name:52s} median {median:8.1f} ms   p95 {p95:8.1f} ms{mark}", flush=True)
    return {"what": name, "median_ms": round(median, 1), "p95_ms": round(p95, 1)}


def _check(response: Any, name: str) -> Any:
    if response.status_code != 200:
        raise SystemExit(f"{name} answered {response.status_code}")
    return response


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=10)
    parser.add_argument("--cases", type=int, default=100_000)
    args = parser.parse_args()
    os.environ["OLOPROOF_DATA_DIR"] = tempfile.mkdtemp(prefix="oloproof-bench-compare-")
    os.environ.pop("DATABASE_URL", None)
    os.environ["DJANGO_SETTINGS_MODULE"] = "evalsite.settings"
    import django

    django.setup()
    from django.contrib.auth.models import User
    from django.core.cache import cache
    from django.core.management import call_command
    from django.test import Client
    from django.test.utils import setup_test_environment

    from oloproof_core.results.compare import compare_runs
    from runs.models import Run
    from runs.selectors.comparison import recent_comparisons_clear
    from runs.selectors.results import run_result

    def forget_comparisons() -> None:
        cache.clear()
        recent_comparisons_clear()

    setup_test_environment()
    call_command("migrate", interactive=False, verbosity=0)
    started = time.perf_counter()
    baseline, candidate = _build(args.cases)
    build_s = time.perf_counter() - started
    print(f"built two {args.cases:,}-case runs in {build_s:.1f} s", flush=True)
    client = Client()
    client.force_login(User.objects.get(username="bench"))
    pair = f"baseline={baseline}&candidate={candidate}"
    pages = {
        "compare + grid, first compare (cache emptied)": (f"/compare/?{pair}", True),
        "compare + grid, first page": (f"/compare/?{pair}", False),
        "grid: regressed only": (f"/compare/?{pair}&show=regressed", False),
        "grid: by change, largest drop first": (f"/compare/?{pair}&order=change", False),
        "grid: missing on either side, page 20": (f"/compare/?{pair}&show=missing&page=20", False),
        "grid: page 1,000": (f"/compare/?{pair}&page=1000", False),
        "API: compared cases, offset 50,000": (f"/api/compare/cases?{pair}&offset=50000", False),
        "floor: the candidate's case table, first page": (f"/runs/{candidate}/cases/", False),
    }
    rows = []
    for name, (path, cold) in pages.items():
        _check(client.get(path), name)

        def request(path: str = path) -> Any:
            return client.get(path)

        rows.append(
            _row(name, _timed(request, args.repeats, forget_comparisons if cold else _none))
        )
    runs = (Run.objects.get(pk=baseline), Run.objects.get(pk=candidate))

    def before_the_change() -> None:
        compare_runs(
            run_result(run=runs[0], with_content=False), run_result(run=runs[1], with_content=False)
        )

    floor = _row(
        "floor: whole results read back, then compare_runs",
        _timed(before_the_change, max(2, args.repeats // 5), _none),
    )
    rows.append(floor)
    ratio = floor["median_ms"] / rows[0]["median_ms"]
    print(f"first compare: {ratio:.1f}x faster than the floor")
    table = next(row for row in rows if row["what"].startswith("floor: the candidate"))
    grid_ratio = rows[1]["median_ms"] / table["median_ms"]
    print(f"grid page: {grid_ratio:.2f}x the time of a 50-row case table page")

    def export() -> None:
        response = _check(client.get(f"/compare/export?{pair}&format=csv"), "export")
        for _ in response.streaming_content:
            pass

    rows.append(_row("export: all cases as CSV, streamed to the end", _timed(export, 2, _none)))
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "compare.json").write_text(
        json.dumps(
            {
                "database": "sqlite",
                "cases_per_run": args.cases,
                "repeats": args.repeats,
                "target_median_ms": TARGET_MS,
                "first_compare_speedup_over_floor": round(ratio, 2),
                "grid_page_over_case_table_page": round(grid_ratio, 2),
                "rows": rows,
            },
            indent=2,
        )
        + "\n"
    )
    return 0


def _none() -> None:
    return None


if __name__ == "__main__":
    sys.exit(main())
