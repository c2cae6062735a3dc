"""One measurement, in a process of its own (Django's settings are per process).

The process creates its scratch database, writes the project, starts the workers and
waits until each answers a ping, then submits the run (`runs.services.run_submit`, as
`oloproof run --submit` does) and polls the database until the run has succeeded or
failed. The clock runs from submission to `succeeded`; its phases are read from the
same polling: submission (the dataset loaded, checked and recorded), planning (until
the run is running), chunks (until every chunk is done) and finalising.
"""

from __future__ import annotations

import math
import os
import resource
import tempfile
import time
from pathlib import Path
from typing import Any

from bench._platform import django_on, drop_database, fresh_database
from bench.scale_workers._fleet import MemorySampler, PrivateRedis, kill_worker
from bench.scale_workers._project import run_config, write_project
from bench.workers.__main__ import start_workers, stop_workers, wait_for_workers

REPO = Path(__file__).resolve().parents[2]
POLL_S = 0.25


def environment(spec: dict[str, Any], database_url: str, broker: str, work: Path) -> dict[str, str]:
    env = {
        **os.environ,
        "DATABASE_URL": database_url,
        "CELERY_BROKER_URL": broker,
        "OLOPROOF_CHUNK_SIZE": str(spec["chunk"]),
        "OLOPROOF_DATA_DIR": str(work / "data"),
        "PYTHONPATH": str(REPO),
        "DJANGO_SETTINGS_MODULE": "evalsite.settings",
    }
    if spec.get("faults"):
        # Shorter than the defaults (60 s, 30 s) so the killed worker's chunk comes back
        # within the run; the mechanism is the same.
        env["OLOPROOF_CHUNK_STALE_AFTER"] = str(spec["stale_after"])
        env["OLOPROOF_SWEEP_INTERVAL"] = str(spec["sweep_interval"])
    return env


def measure(spec: dict[str, Any]) -> dict[str, Any]:
    """Set up, run and tear down one measurement described by `spec`."""
    database = f"oloproof_scale_workers_{spec['kind']}_{spec['workers']}"
    database_url = fresh_database(spec["postgres"], database)
    work = Path(tempfile.mkdtemp(prefix="oloproof-scale-workers-"))
    broker = PrivateRedis() if spec.get("faults") else None
    if broker is not None:
        broker.start()
    env = environment(spec, database_url, broker.url if broker else spec["redis"], work)
    django_on(env, env["CELERY_BROKER_URL"])
    salt = f"{spec['kind']}-{spec['workers']}-{time.time_ns()}"
    project = write_project(work / "project", kind=spec["kind"], cases=spec["cases"], salt=salt)
    workers = start_workers(spec["workers"], env, work)
    try:
        wait_for_workers(spec["workers"], timeout=180)
        with MemorySampler(workers) as sampler:
            row = _submit_and_wait(spec, project, workers, sampler, broker)
        row.update(sampler.report())
        # This process submitted: its peak is the submission's (the dataset loaded whole).
        row["submitting_process_peak_rss_mb"] = round(
            resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        )
        row.update(_check(row.pop("run_id"), spec["cases"]))
    finally:
        stop_workers(workers)
        from django.db import connections

        connections.close_all()
        drop_database(spec["postgres"], database)
        if broker is not None:
            broker.stop()
        _remove(work)
    return row


def _submit_and_wait(
    spec: dict[str, Any],
    project: Path,
    workers: list[Any],
    sampler: MemorySampler,
    broker: PrivateRedis | None,
) -> dict[str, Any]:
    from runs.models import Run, RunChunk
    from runs.services import run_submit

    chunks_total = math.ceil(spec["cases"] / spec["chunk"])
    started = time.perf_counter()
    run = run_submit(
        config=run_config(spec["kind"], concurrency=spec.get("concurrency")),
        base_dir=str(project),
    )
    marks: dict[str, float] = {"submitted": time.perf_counter() - started}
    faults: dict[str, Any] = {}
    while True:
        status = Run.objects.values_list("status", flat=True).get(pk=run.pk)
        now = time.perf_counter() - started
        if status == Run.Status.RUNNING:
            marks.setdefault("running", now)
            done = RunChunk.objects.filter(run_id=run.pk, status=RunChunk.Status.DONE).count()
            if done >= chunks_total and "chunks_done" not in marks:
                marks["chunks_done"] = now
                sampler.finalising = True
            if spec.get("faults") and not faults and done >= chunks_total * spec["fault_at"]:
                faults = _inject_faults(workers, broker, now, done)
        if status in (Run.Status.SUCCEEDED, Run.Status.FAILED):
            break
        time.sleep(POLL_S)
    seconds = time.perf_counter() - started
    finished = Run.objects.get(pk=run.pk)
    if finished.status != Run.Status.SUCCEEDED:
        raise SystemExit(f"run {run.pk} failed: {finished.error}")
    return {
        "run_id": run.pk,
        "seconds": round(seconds, 2),
        "cases_per_s": round(spec["cases"] / seconds, 1),
        "phases_s": _phases(marks, seconds),
        "faults": faults or None,
    }


def _phases(marks: dict[str, float], seconds: float) -> dict[str, float | None]:
    submitted = marks["submitted"]
    running = marks.get("running", submitted)
    chunks_done = marks.get("chunks_done")
    return {
        "submission": round(submitted, 2),
        "planning": round(running - submitted, 2),
        "chunks": None if chunks_done is None else round(chunks_done - running, 2),
        "finalising": None if chunks_done is None else round(seconds - chunks_done, 2),
    }


def _inject_faults(
    workers: list[Any], broker: PrivateRedis | None, at_s: float, done: int
) -> dict[str, Any]:
    """SIGKILL the first worker mid-chunk, then restart the broker empty."""
    assert broker is not None
    kill_worker(workers[0])
    broker.stop()  # the messages it held are gone with it
    time.sleep(0.5)
    broker.start()
    return {"at_s": round(at_s, 2), "chunks_done_then": done, "killed_worker_pid": workers[0].pid}


def _check(run_id: int, cases: int) -> dict[str, Any]:
    """Every case recorded exactly once, and how the chunks were taken."""
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT count(*), count(DISTINCT case_id) FROM runs_caseresult WHERE run_id = %s",
            [run_id],
        )
        rows, distinct = cursor.fetchone()
        cursor.execute(
            "SELECT count(*), sum(attempts), count(DISTINCT split_part(claimed_by, ':', 2)) "
            "FROM runs_runchunk WHERE run_id = %s",
            [run_id],
        )
        chunks, attempts, processes = cursor.fetchone()
    return {
        "case_rows": rows,
        "distinct_case_ids": distinct,
        "each_case_once": rows == distinct == cases,
        "chunks": chunks,
        "chunk_attempts": int(attempts),
        "worker_processes_that_took_chunks": processes,
    }


def _remove(folder: Path) -> None:
    import shutil

    shutil.rmtree(folder, ignore_errors=True)
