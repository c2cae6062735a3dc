"""A run queued with `oloproof run --submit` and run by a real Celery worker over Redis:
its config's code is imported, by the submission's check and by the worker, only in
sandboxed processes. Its modules try, at import, to write beside themselves and report
the secrets they can see: nothing is written, nothing seen, and the run succeeds."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from tests.support.platform import platform, redis_flush, redis_url, write_project

pytestmark = pytest.mark.redis

REDIS_PORT = 6379
REDIS_DB = 7
AT_IMPORT = """
import json, os, sys
from pathlib import Path

try:
    Path(__file__).with_name("imported-unsandboxed-{who}.txt").write_text("top-level code ran")
except OSError:
    pass
print("AT-IMPORT " + json.dumps({{"who": "{who}", "secret": os.environ.get("SECRET_KEY"),
      "database": os.environ.get("DATABASE_URL")}}), file=sys.stderr, flush=True)
"""


def test_a_worker_reads_a_runs_code_in_its_sandbox_only(tmp_path: Path) -> None:
    redis_flush(REDIS_PORT, REDIS_DB)
    config = write_project(tmp_path / "project", n_cases=6)
    for module, who in (("bot.py", "system"), ("checks.py", "evaluator")):
        path = config.parent / module
        path.write_text(AT_IMPORT.format(who=who) + path.read_text(encoding="utf-8"))
    with platform(tmp_path, broker_url=redis_url(REDIS_PORT, REDIS_DB)) as running:
        running.migrate_server_database()
        run_id = running.submit(config)
        running.start(
            ["worker", "--concurrency=1", "--loglevel=WARNING"],
            name="worker",
            extra_env={"SECRET_KEY": "the-workers-secret"},
        )
        finished = running.wait_for_run(run_id, timeout=120)
        log = running.log_text()

    assert finished["status"] == "succeeded", (finished, log)
    assert not list(config.parent.glob("imported-unsandboxed-*")), log
    # Processes write to the one log at once: a report may share its line with another's.
    seen = [json.loads(found) for found in re.findall(r"AT-IMPORT (\{[^{}]*\})", log)]
    assert {item["who"] for item in seen} == {"system", "evaluator"}, log
    assert all(item["secret"] is None and item["database"] is None for item in seen), seen
