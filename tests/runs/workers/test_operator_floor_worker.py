"""A real Celery worker process over Redis, started with `OLOPROOF_SANDBOX=required`, is
given runs queued by `oloproof run --submit` where no floor was set, whose configs say
`sandbox: off` and `isolation: thread`: each run fails saying why, and its system never
runs (it would leave a file beside its code)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.platform import platform, redis_flush, redis_url, write_project

pytestmark = pytest.mark.redis

REDIS_PORT = 6379
REDIS_DB = 10
FLOOR = "this machine's operator set OLOPROOF_SANDBOX=required, which a run cannot lower"
MARKING_BOT = """
from pathlib import Path

from oloproof import system


@system(name="queue-bot", version="1")
def answer(case):
    Path(__file__).with_name("ran.txt").write_text("the system ran")
    return {"label": "refund"}
"""


def test_a_worker_with_the_floor_fails_runs_that_lower_it_and_runs_none_of_their_code(
    tmp_path: Path,
) -> None:
    redis_flush(REDIS_PORT, REDIS_DB)
    config = write_project(tmp_path / "project", n_cases=4)
    (config.parent / "bot.py").write_text(MARKING_BOT, encoding="utf-8")
    configs = {}
    for name, line in [("sandbox", "sandbox: off"), ("isolation", "isolation: thread")]:
        configs[line] = config.with_name(f"{name}.yaml")
        configs[line].write_text(config.read_text(encoding="utf-8") + line + "\n")
    with platform(tmp_path, broker_url=redis_url(REDIS_PORT, REDIS_DB)) as running:
        running.migrate_server_database()
        runs = {line: running.submit(path) for line, path in configs.items()}
        running.start(
            ["worker", "--concurrency=1", "--loglevel=WARNING"],
            name="worker",
            extra_env={"OLOPROOF_SANDBOX": "required"},
        )

        for line, run_id in runs.items():
            finished = running.wait_for_run(run_id, timeout=120)
            assert finished["status"] == "failed", finished
            assert f"refused run {run_id}: {line} " in finished["error"]
            assert FLOOR in finished["error"]
            assert running.database.case_ids(run_id) == []
    assert not (config.parent / "ran.txt").exists()
