"""A DSPy program's optimization queued for a real Celery worker over Redis: DSPy's
optimizers would call the runner's program in the worker's own process, outside any
sandbox, so the worker refuses it unless its operator allows that, and none of the
program's code runs in the worker."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from tests.support.optimize_task import write_project
from tests.support.platform import platform, redis_flush, redis_url

pytestmark = pytest.mark.redis
pytest.importorskip("dspy")

REDIS_PORT = 6379
REDIS_DB = 8
PROGRAM = """
from pathlib import Path

try:
    Path(__file__).with_name("imported-in-the-worker.txt").write_text("top-level code ran")
except OSError:
    pass

import dspy

program = dspy.Predict(dspy.Signature("question -> answer", "You are a calculator."))
"""


def test_a_worker_refuses_a_dspy_programs_optimization_unless_its_operator_allows_it(
    tmp_path: Path,
) -> None:
    redis_flush(REDIS_PORT, REDIS_DB)
    config = write_project(tmp_path / "project", engine="dspy-gepa", n=8)
    (config.parent / "program.py").write_text(PROGRAM, encoding="utf-8")
    data = {**json.loads(config.read_text(encoding="utf-8")), "system": "program.py:program"}
    with platform(tmp_path, broker_url=redis_url(REDIS_PORT, REDIS_DB)) as running:
        running.migrate_server_database()
        queued = running.python(
            f"""
            from django.core.management import call_command
            call_command("migrate", interactive=False, verbosity=0)
            from runs.access import LOCAL
            from runs.writers.projects import code_root_register, project_default_ensure
            from runs.services import optimization_submit
            folder = {str(config.parent)!r}
            code_root_register(by=LOCAL, project=project_default_ensure(), path=folder)
            print(optimization_submit(config={data!r}, base_dir=folder).pk)
            """
        )
        optimization_id = int(queued.split()[-1])
        running.start(["worker", "--concurrency=1", "--loglevel=WARNING"], name="worker")
        deadline = time.monotonic() + 120
        status, error = "queued", ""
        while time.monotonic() < deadline and status not in ("failed", "succeeded"):
            time.sleep(0.5)
            rows = running.database.rows(
                "SELECT status, error FROM runs_optimization WHERE id = ?", [optimization_id]
            )
            status, error = rows[0]
        log = running.log_text()

    assert status == "failed", (status, error, log)
    assert "is a DSPy program" in error
    assert "OLOPROOF_DSPY_IN_PROCESS=allow" in error
    assert not (config.parent / "imported-in-the-worker.txt").exists()
