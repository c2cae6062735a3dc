"""Statements sent by submission and planning at two sizes: neither may grow per case.

Submission (`runs.services.run_submit`) and planning
(`runs.workers.planning.run_start`, as the worker's start task calls it) are called in
this process on a scratch database, each counted with a connection execute wrapper (a
COPY or an `executemany` is one statement).
The chunk messages planning sends go to the broker database given, emptied after.
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

from bench._platform import django_on, drop_database, fresh_database
from bench.scale_workers._measure import REPO, _remove
from bench.scale_workers._project import run_config, write_project

DATABASE = "oloproof_scale_workers_planning"


def count_statements(spec: dict[str, Any]) -> list[dict[str, Any]]:
    database_url = fresh_database(spec["postgres"], DATABASE)
    work = Path(tempfile.mkdtemp(prefix="oloproof-scale-workers-"))
    env = {
        "DATABASE_URL": database_url,
        "CELERY_BROKER_URL": spec["redis"],
        "OLOPROOF_CHUNK_SIZE": str(spec["chunk"]),
        "OLOPROOF_DATA_DIR": str(work / "data"),
        "PYTHONPATH": str(REPO),
        "DJANGO_SETTINGS_MODULE": "evalsite.settings",
    }
    django_on(env, spec["redis"])
    try:
        # Unreported: the first submission also creates the project and its code root.
        _one(10, spec["chunk"], work)
        return [_one(size, spec["chunk"], work) for size in spec["sizes"]]
    finally:
        import redis
        from django.db import connections

        connections.close_all()
        drop_database(spec["postgres"], DATABASE)
        redis.Redis.from_url(spec["redis"]).flushdb()
        _remove(work)


def _one(size: int, chunk: int, work: Path) -> dict[str, Any]:
    from django.db import connection

    from runs.services import run_submit
    from runs.workers.planning import run_start

    project = write_project(work / "project", kind="trivial", cases=size, salt=str(size))
    counts = {"submission": 0, "planning": 0}
    phase = "submission"

    def count(execute: Any, sql: str, params: Any, many: bool, context: Any) -> Any:
        counts[phase] += 1
        return execute(sql, params, many, context)

    with connection.execute_wrapper(count):
        run = run_submit(config=run_config("trivial", concurrency=None), base_dir=str(project))
        phase = "planning"
        outcome = run_start(run_id=run.pk)
    return {
        "cases": size,
        "chunks": -(-size // chunk),
        "planning_outcome": outcome,
        "submission_statements": counts["submission"],
        "planning_statements": counts["planning"],
    }
