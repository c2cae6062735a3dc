"""End-to-end throughput of submitted runs on 1, 2 and 4 worker processes.

The system is I/O-bound: each case sleeps 50 ms (a stand-in for a model call), run
4 cases at a time per chunk (`concurrency: 4` in the config); each worker is
`oloproof worker --concurrency 1`, one process. The broker is Redis, the database
PostgreSQL. Workers are started and ready before the run is submitted; the time is
from submission to the run's `succeeded` status (planning, chunks, finalising).

    scaling efficiency(N) = throughput(N) / (N x throughput(1))

Run: .venv/bin/python -m bench.workers [--cases 960] [--chunk 40] [--workers 1 2 4]
Writes bench/results/workers.json.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bench._platform import django_on, drop_database, fresh_database

REPO = Path(__file__).resolve().parents[2]
RESULTS = REPO / "bench" / "results"
DATABASE = "oloproof_bench_workers"
SLEEP_MS = 50
CASE_CONCURRENCY = 4

SYSTEM = f"""
import time

from oloproof import system


@system(name="io-bound-bot", version="1")
def answer(case):
    time.sleep({SLEEP_MS} / 1000)
    return {{"label": "refund" if "refund" in case["question"] else "other"}}
"""


def write_project(folder: Path, *, cases: int, salt: str) -> Path:
    """A project whose inputs differ per measurement, so no run reuses cached verdicts."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "bot.py").write_text(SYSTEM, encoding="utf-8")
    with (folder / "data.jsonl").open("w", encoding="utf-8") as handle:
        for i in range(cases):
            label = "refund" if i % 2 else "other"
            question = f"{'refund' if i % 2 else 'parcel'} #{i} {salt}"
            handle.write(
                json.dumps(
                    {
                        "id": f"c{i:06d}",
                        "input": {"question": question},
                        "expected": {"label": label},
                    }
                )
                + "\n"
            )
    config = folder / "oloproof.yaml"
    config.write_text(
        "system: bot.py:answer\ndataset: data.jsonl\n"
        "evaluators:\n  - ExactMatch: {criterion: exact_label, field: label}\n"
        f"concurrency: {CASE_CONCURRENCY}\n",
        encoding="utf-8",
    )
    return config


def start_workers(count: int, env: dict[str, str], logs: Path) -> list[subprocess.Popen[bytes]]:
    workers = []
    for index in range(count):
        log = (logs / f"worker-{count}-{index}.log").open("ab")
        workers.append(
            subprocess.Popen(
                [
                    sys.executable,
                    "-m",
                    "oloproof",
                    "worker",
                    "--concurrency=1",
                    "--loglevel=WARNING",
                ],
                env=env,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        )
    return workers


def stop_workers(workers: list[subprocess.Popen[bytes]]) -> None:
    for worker in workers:
        if worker.poll() is None:
            os.killpg(worker.pid, signal.SIGTERM)
    for worker in workers:
        try:
            worker.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(worker.pid, signal.SIGKILL)
            worker.wait()
        # Pool and system processes left by a main process that died first.
        with contextlib.suppress(ProcessLookupError):
            os.killpg(worker.pid, signal.SIGKILL)


def wait_for_workers(count: int, timeout: float = 120) -> None:
    from evalsite.celery import app

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if len(app.control.ping(timeout=0.5)) >= count:
            return
    raise SystemExit(f"only some of {count} workers answered within {timeout:.0f}s")


def measure(count: int, *, cases: int, env: dict[str, str], work: Path) -> dict[str, Any]:
    from runs.models import Run, RunChunk
    from runs.services import run_submit

    config = write_project(work / f"project-{count}", cases=cases, salt=f"n{count}")
    workers = start_workers(count, env, work)
    try:
        wait_for_workers(count)
        started = time.perf_counter()
        run = run_submit(
            config={
                "system": "bot.py:answer",
                "dataset": "data.jsonl",
                "evaluators": [{"ExactMatch": {"criterion": "exact_label", "field": "label"}}],
                "concurrency": CASE_CONCURRENCY,
            },
            base_dir=str(config.parent),
        )
        while True:
            status = Run.objects.values_list("status", flat=True).get(pk=run.pk)
            if status in (Run.Status.SUCCEEDED, Run.Status.FAILED):
                break
            time.sleep(0.02)
        seconds = time.perf_counter() - started
        finished = Run.objects.get(pk=run.pk)
        if finished.status != Run.Status.SUCCEEDED:
            raise SystemExit(f"run failed: {finished.error}")
        assert finished.cases_done == cases
        workers_used = {
            claimed.rsplit(":", 1)[0]
            for claimed in RunChunk.objects.filter(run=run).values_list("claimed_by", flat=True)
        }
    finally:
        stop_workers(workers)
    return {
        "workers": count,
        "seconds": round(seconds, 3),
        "cases_per_s": round(cases / seconds, 1),
        "worker_processes_that_took_chunks": len(workers_used),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=960)
    parser.add_argument("--chunk", type=int, default=40, help="cases per chunk task")
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 2, 4])
    parser.add_argument("--postgres", default="postgresql://postgres@127.0.0.1:5432")
    parser.add_argument("--redis", default="redis://127.0.0.1:6379/13")
    args = parser.parse_args()

    database_url = fresh_database(args.postgres, DATABASE)
    work = Path(tempfile.mkdtemp(prefix="oloproof-bench-workers-"))
    env = {
        **os.environ,
        "DATABASE_URL": database_url,
        "CELERY_BROKER_URL": args.redis,
        "OLOPROOF_CHUNK_SIZE": str(args.chunk),
        "OLOPROOF_DATA_DIR": str(work / "data"),
        "PYTHONPATH": str(REPO),
        "DJANGO_SETTINGS_MODULE": "evalsite.settings",
    }
    django_on(env, args.redis)
    try:
        rows = [measure(n, cases=args.cases, env=env, work=work) for n in args.workers]
    finally:
        from django.db import connections

        connections.close_all()
        drop_database(args.postgres, DATABASE)
    base = next((row for row in rows if row["workers"] == 1), None)
    for row in rows:
        row["scaling_efficiency"] = (
            None
            if base is None
            else round(row["cases_per_s"] / (row["workers"] * base["cases_per_s"]), 2)
        )
    report = {
        "cases": args.cases,
        "chunk_size": args.chunk,
        "sleep_ms_per_case": SLEEP_MS,
        "cases_at_once_per_chunk": CASE_CONCURRENCY,
        "processes_per_worker": 1,
        "broker": "redis",
        "database": "postgresql",
        "cpus": os.cpu_count(),
        "runs": rows,
    }
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "workers.json").write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    print(f"{'workers':>7}  {'seconds':>8}  {'cases/s':>8}  {'efficiency':>10}")
    for row in rows:
        efficiency = row["scaling_efficiency"]
        print(
            f"{row['workers']:>7}  {row['seconds']:>8.2f}  {row['cases_per_s']:>8.1f}  "
            f"{'' if efficiency is None else f'{efficiency:.2f}':>10}"
        )


if __name__ == "__main__":
    main()
