"""Case table server time at 100,000 cases: full-text search, criterion columns,
annotation filters, one case, and exports — on SQLite and on PostgreSQL.

Builds one run of 100,000 cases (see _cases_data.py) in a fresh database, then requests
each page with Django's test Client (signed in) and reports the median and 95th
percentile from request to rendered response. In the same run, as floors to read the
figures against: the unfiltered first page, and the substring scan (`LIKE`) the search
used before the full-text index, over the same cases. Also the cost of the index on
recording: 100,000 case results bulk-inserted with it and without it. On PostgreSQL the
pages are timed twice: straight after recording, and after VACUUM ANALYZE (what a
server's autovacuum does within about a minute of a large insert).

Run: .venv/bin/python -m bench.dashboard.cases [--database sqlite|postgresql]
     [--cases 100000] [--repeats 20] [--pages-only]
PostgreSQL: a fresh database on OLOPROOF_BENCH_PG (default postgresql://postgres@127.0.0.1:5432).
Writes bench/results/cases_<database>.json.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

RESULTS = Path(__file__).resolve().parents[1] / "results"
TARGET_MS = 150.0
PG_DATABASE = "oloproof_bench_cases"


def _setup(database: str) -> None:
    os.environ["DJANGO_SETTINGS_MODULE"] = "evalsite.settings"
    os.environ["OLOPROOF_DATA_DIR"] = tempfile.mkdtemp(prefix="oloproof-bench-cases-")
    os.environ.pop("DATABASE_URL", None)
    if database == "postgresql":
        from bench._platform import fresh_database

        server = os.environ.get("OLOPROOF_BENCH_PG", "postgresql://postgres@127.0.0.1:5432")
        os.environ["DATABASE_URL"] = fresh_database(server, PG_DATABASE)
    import django

    django.setup()
    from django.core.management import call_command
    from django.test.utils import setup_test_environment

    setup_test_environment()
    call_command("migrate", interactive=False, verbosity=0)


def _timed(work: Callable[[], Any], repeats: int) -> dict[str, float]:
    work()
    times = []
    for _ in range(repeats):
        begin = time.perf_counter()
        work()
        times.append((time.perf_counter() - begin) * 1000)
    times.sort()
    p95 = times[min(len(times) - 1, round(0.95 * (len(times) - 1)))]
    return {"median_ms": round(statistics.median(times), 1), "p95_ms": round(p95, 1)}


def _pages(run_id: int, case_id: str, rare: str) -> dict[str, str]:
    cases = f"/runs/{run_id}/cases/"
    return {
        "first page (floor)": cases,
        "search: a rare word (1 case)": f"{cases}?q={rare}",
        "search: a common word (~1 in 8 inputs)": f"{cases}?q=parcel",
        "search: two words": f"{cases}?q=cancel+coupon",
        "search: a prefix in outputs only": f"{cases}?q=rout&search_in=output",
        "search: errors only": f"{cases}?q=timeout&search_in=error",
        "search: a case id": f"{cases}?q={case_id}",
        "search + criterion failed": f"{cases}?q=refund&criterion=exact_label&outcome=failed",
        "criterion filter, criterion columns": (
            f"{cases}?criterion=reply_quality&outcome=failed&cols=case&cols=expected"
            "&crit=exact_label&crit=reply_quality"
        ),
        "annotations: disagree": f"{cases}?annotation=disagree",
        "page 1,000": f"{cases}?page=1000",
        "one case with annotations": f"/runs/{run_id}/cases/{case_id}",
    }


def _time_pages(client: Any, pages: dict[str, str], repeats: int) -> list[dict[str, Any]] | None:
    """Each page's median and 95th percentile; None (and a message) if one does not answer."""
    rows = []
    for name, path in pages.items():
        response = client.get(path)
        if response.status_code != 200:
            print(f"{name}: {path} answered {response.status_code}", file=sys.stderr)
            return None
        figures = _timed(_getter(client, path), repeats)
        rows.append({"page": name, "path": path, **figures})
        mark = "" if figures["median_ms"] < TARGET_MS else "  (over target)"
        median, p95 = figures["median_ms"], figures["p95_ms"]
        print(f"{name:44s} median {median:7.1f} ms   p95 {p95:7.1f} ms{mark}", flush=True)
    return rows


def _vacuum_analyze() -> None:
    from django.db import connection

    with connection.cursor() as cursor:
        for table in ("runs_caseresult", "runs_datasetcase", "metrics_caseverdict"):
            cursor.execute(f"VACUUM ANALYZE {table}")


def _getter(client: Any, path: str) -> Callable[[], Any]:
    return lambda: client.get(path)


def _substring_scan(run_id: int, word: str) -> Callable[[], Any]:
    """The former search: a LIKE over the outputs' text and the error, count and page."""
    from django.db.models import Q, TextField
    from django.db.models.functions import Cast

    from runs.models import CaseResult

    def scan() -> Any:
        query = (
            CaseResult.objects.filter(run_id=run_id)
            .annotate(output_text=Cast("output", TextField()))
            .filter(
                Q(case_id__icontains=word)
                | Q(output_text__icontains=word)
                | Q(error_message__icontains=word)
            )
            .order_by("position")
        )
        return query.count(), list(query[:50])

    return scan


def _export_rate(client: Any, run_id: int) -> dict[str, float]:
    begin = time.perf_counter()
    response = client.get(f"/runs/{run_id}/cases.jsonl")
    lines = sum(chunk.count(b"\n") for chunk in response.streaming_content)
    seconds = time.perf_counter() - begin
    return {"cases": lines, "seconds": round(seconds, 2), "cases_per_s": round(lines / seconds)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--database", choices=("sqlite", "postgresql"), default="sqlite")
    parser.add_argument("--cases", type=int, default=100_000)
    parser.add_argument("--repeats", type=int, default=20)
    parser.add_argument(
        "--pages-only", action="store_true", help="time the pages, skip exports and inserts"
    )
    args = parser.parse_args()
    _setup(args.database)
    from django.contrib.auth.models import User
    from django.test import Client

    from bench.dashboard._cases_data import build_case_run, time_inserts

    started = time.perf_counter()
    built = build_case_run(args.cases)
    print(f"built a {args.cases:,}-case run in {time.perf_counter() - started:.1f} s", flush=True)
    client = Client()
    client.force_login(User.objects.get(username="bench"))
    pages = _pages(built.run_id, built.case_id, built.rare_word)
    rows = _time_pages(client, pages, args.repeats)
    if rows is None:
        return 1
    just_recorded = None
    if args.database == "postgresql":
        # A server with autovacuum on (the default) vacuums and analyzes a table within
        # about a minute of a large insert; this machine's server has it off. Both states
        # are timed: straight after recording, and after what autovacuum would have done.
        just_recorded = rows
        _vacuum_analyze()
        print("after VACUUM ANALYZE:", flush=True)
        rows = _time_pages(client, pages, args.repeats)
        if rows is None:
            return 1
    if args.pages_only:
        return 0
    scan = _timed(_substring_scan(built.run_id, built.rare_word), max(5, args.repeats // 4))
    print(f"{'former LIKE scan (queries only)':44s} median {scan['median_ms']:7.1f} ms", flush=True)
    export = _export_rate(client, built.run_id)
    print(f"export JSONL: {export['cases']:,} cases in {export['seconds']} s", flush=True)
    inserts = time_inserts(args.cases, built.run_id)
    for name, seconds in inserts.items():
        print(f"insert {args.cases:,} case results {name}: {seconds:.2f} s", flush=True)
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / f"cases_{args.database}.json").write_text(
        json.dumps(
            {
                "database": args.database,
                "cases": args.cases,
                "repeats": args.repeats,
                "target_median_ms": TARGET_MS,
                "pages": rows,
                "pages_just_recorded": just_recorded,
                "former_like_scan": scan,
                "export_jsonl": export,
                "insert_case_results_s": {k: round(v, 2) for k, v in inserts.items()},
            },
            indent=2,
        )
        + "\n"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
