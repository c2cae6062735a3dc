"""Record a 100,000-case run into SQLite and into PostgreSQL: seconds, peak memory, queries.

    .venv/bin/python -m bench.record [--cases 100000] [--postgres URL | --no-postgres]
                                     [--no-sqlite] [--out rows.json]

Each backend runs in its own process (Django settings are per process) on a fresh
database: SQLite in a temporary data folder, PostgreSQL in a scratch database
created and dropped by the benchmark. The run is built by the engine's own
aggregation over synthetic cases (one pass/fail criterion, 2 % system errors) so that
the figures measure recording alone, not executing a system.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path
from typing import Any

DEFAULT_POSTGRES = "postgresql://postgres@127.0.0.1:5432/oloproof_bench_record"


def build_result(n_cases: int) -> Any:
    from oloproof_core.cases.case import CaseError, CaseResult
    from oloproof_core.cases.observations import Measurements
    from oloproof_core.cases.verdict import Verdict
    from oloproof_core.evaluation.aggregate import aggregate
    from oloproof_core.judging.evaluators import ExactMatch
    from oloproof_core.results.result import Result

    exact = ExactMatch(criterion="exact_label", field="label")
    labels = ("refund", "other", "billing")
    cases = []
    for i in range(n_cases):
        label = labels[i % 3]
        case = CaseResult(
            id=f"case_{i:06d}",
            input={"question": f"question number {i} about {label}"},
            expected={"label": label},
            cluster=f"user_{i % 997}",
            measurements=Measurements(latency_ms=12.5 + i % 40),
        )
        if i % 50 == 0:
            case.error = CaseError("TimeoutError", "the system took longer than 5 s", "")
            case.verdicts["exact_label"] = Verdict.failed_to_judge("not judged")
        else:
            case.output = {"label": label if i % 7 else "other"}
            case.verdicts["exact_label"] = Verdict(value=float(case.output["label"] == label))
        cases.append(case)
    metrics = aggregate(cases, [exact], 0.95)
    provenance = {
        "system": {"name": "bench-bot", "version": "1", "import_path": "bench:bot"},
        "dataset": {"source": "bench.jsonl", "digest": f"bench-{n_cases}", "n_cases": n_cases},
        "evaluators": [exact.describe()],
        "policy": None,
        "confidence": 0.95,
    }
    return Result(metrics=metrics, cases=cases, provenance=provenance)


def measure(backend: str, n_cases: int) -> dict[str, Any]:
    """Runs in the child process: set Django up on a fresh database and record twice."""
    import django

    os.environ["DJANGO_SETTINGS_MODULE"] = "evalsite.settings"
    django.setup()
    from django.core.management import call_command
    from django.db import connection

    from runs.models import Dataset, Run
    from runs.store import DjangoStore

    call_command("migrate", interactive=False, verbosity=0)
    result = build_result(n_cases)
    queries = 0

    def count(execute: Any, sql: str, params: Any, many: bool, context: Any) -> Any:
        nonlocal queries
        queries += 1
        return execute(sql, params, many, context)

    store = DjangoStore()
    with connection.execute_wrapper(count):
        started = time.perf_counter()
        store.record_run(result)
        seconds = time.perf_counter() - started
    floor = floor_seconds(result)

    # Peak Python memory of a second recording, once more from an empty database.
    Run.objects.all().delete()
    Dataset.objects.all().delete()
    tracemalloc.start()
    store.record_run(result)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return {
        "backend": backend,
        "cases": n_cases,
        "seconds": round(seconds, 2),
        "cases_per_second": round(n_cases / seconds),
        "floor_seconds": round(floor, 2),
        "over_floor": round(seconds / floor, 2),
        "queries": queries,
        "peak_memory_mb": round(peak / 2**20, 1),
        "batch_size": int(os.environ.get("OLOPROOF_RECORD_CHUNK_SIZE", "2000")),
    }


def floor_rows(result: Any, run_id: int, dataset_id: int) -> dict[str, list[tuple[Any, ...]]]:
    """The same three tables' rows as plain tuples, JSON as text: what any bulk writer sends."""
    dumps = json.dumps
    dataset_cases, case_results, verdicts = [], [], []
    for position, case in enumerate(result.cases):
        dataset_cases.append(
            (
                dataset_id,
                case.id,
                position,
                dumps(case.input),
                dumps(case.expected),
                None,
                case.cluster,
            )
        )
        failed = case.error is not None
        case_results.append(
            (
                run_id,
                case.id,
                position,
                None if failed else dumps(case.output),
                case.error.type if failed else "",
                case.error.message if failed else "",
                case.error.traceback if failed else "",
                case.latency_ms,
                None,
                "{}",
                "[]",
                "missing" if failed else "passed",
            )
        )
        for criterion, verdict in case.verdicts.items():
            verdicts.append(
                (
                    run_id,
                    case.id,
                    criterion,
                    verdict.value,
                    verdict.feedback,
                    "{}",
                    verdict.error,
                    verdict.traceback,
                    False,
                )
            )
    return {"dataset_cases": dataset_cases, "case_results": case_results, "verdicts": verdicts}


FLOOR_COLUMNS = {
    "runs_datasetcase": "dataset_id, case_id, position, input, expected, split, cluster",
    "runs_caseresult": "run_id, case_id, position, output, error_type, error_message, "
    "error_traceback, latency_ms, cost_usd, artifacts, model_calls, outcome",
    "metrics_caseverdict": "run_id, case_id, criterion, value, feedback, scores, error, "
    "error_traceback, cached",
}


def floor_seconds(result: Any) -> float:
    """Build the rows as tuples and write them in one transaction with the driver alone:
    `executemany` on SQLite, `COPY` on PostgreSQL, into the same tables and indexes."""
    from django.db import connection, transaction

    from runs.models import Dataset, Run
    from runs.writers.search_rows import search_rows_add

    run = Run.objects.latest("pk")
    started = time.perf_counter()
    with transaction.atomic():
        dataset = Dataset.objects.create(digest="floor", source="floor", n_cases=0)
        floor_run = Run.objects.create(project=run.project, release=run.release, dataset=dataset)
        rows = floor_rows(result, floor_run.pk, dataset.pk)
        tables = zip(FLOOR_COLUMNS.items(), rows.values(), strict=True)
        with connection.cursor() as wrapper:
            for (table, columns), table_rows in tables:
                if connection.vendor == "postgresql":
                    with wrapper.cursor.copy(f"COPY {table} ({columns}) FROM STDIN") as copy:
                        for row in table_rows:
                            copy.write_row(row)
                else:
                    marks = ", ".join("?" * len(columns.split(",")))
                    wrapper.connection.executemany(
                        f"INSERT INTO {table} ({columns}) VALUES ({marks})", table_rows
                    )
    seconds = time.perf_counter() - started
    # Untimed: SQLite's contentless search index must hold every case result's row, or
    # deleting the floor's rows later (as the second recording's clean-up does) breaks it.
    search_rows_add(run_id=floor_run.pk, new_run=True)
    return seconds


def _child(backend: str, n_cases: int, database_url: str | None) -> dict[str, Any]:
    env = {key: value for key, value in os.environ.items() if key != "DATABASE_URL"}
    with tempfile.TemporaryDirectory(prefix="oloproof-bench-") as data_dir:
        env["OLOPROOF_DATA_DIR"] = data_dir
        if database_url:
            env["DATABASE_URL"] = database_url
        completed = subprocess.run(
            [sys.executable, "-m", "bench.record", "--child", backend, "--cases", str(n_cases)],
            env=env,
            capture_output=True,
            text=True,
            check=False,
        )
    if completed.returncode != 0:
        raise SystemExit(f"{backend} benchmark failed:\n{completed.stderr}")
    return dict(json.loads(completed.stdout.strip().splitlines()[-1]))


def _scratch_postgres(url: str, action: str) -> None:
    import psycopg

    base, name = url.rsplit("/", 1)
    with psycopg.connect(f"{base}/postgres", autocommit=True) as admin:
        admin.execute(f'DROP DATABASE IF EXISTS "{name}"')
        if action == "create":
            admin.execute(f'CREATE DATABASE "{name}"')


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.record", description=__doc__)
    parser.add_argument("--cases", type=int, default=100_000)
    parser.add_argument("--postgres", default=DEFAULT_POSTGRES, help="scratch database URL")
    parser.add_argument("--no-postgres", action="store_true")
    parser.add_argument("--no-sqlite", action="store_true")
    parser.add_argument("--out", default="", help="also write the rows to this JSON file")
    parser.add_argument("--child", choices=["sqlite", "postgresql"], help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(measure(args.child, args.cases)))
        return
    rows = [] if args.no_sqlite else [_child("sqlite", args.cases, None)]
    if not args.no_postgres:
        _scratch_postgres(args.postgres, "create")
        try:
            rows.append(_child("postgresql", args.cases, args.postgres))
        finally:
            _scratch_postgres(args.postgres, "drop")
    if args.out:
        Path(args.out).write_text(json.dumps(rows, indent=2) + "\n", encoding="utf-8")
    print(
        f"{'backend':<11} {'cases':>8} {'seconds':>8} {'cases/s':>8} {'floor s':>8} "
        f"{'× floor':>8} {'queries':>8} {'peak MB':>8}"
    )
    for row in rows:
        print(
            f"{row['backend']:<11} {row['cases']:>8} {row['seconds']:>8} "
            f"{row['cases_per_second']:>8} {row['floor_seconds']:>8} {row['over_floor']:>8} "
            f"{row['queries']:>8} {row['peak_memory_mb']:>8}"
        )


if __name__ == "__main__":
    main()
