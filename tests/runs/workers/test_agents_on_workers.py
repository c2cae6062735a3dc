"""Agents on the workers: examples/agents submitted with `oloproof run --submit --wait` to a
real Celery worker over Redis. Every model call the scripted model answered is in a
case's transcript, kept in the store and read back through the REST API; the
conversations run turn by turn there, and the tasks with a workspace are judged by their
own tests, as in one process.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.journeys.conftest import REPO, user_env
from tests.support.platform import (
    Api,
    Platform,
    free_port,
    platform,
    redis_flush,
    redis_url,
    server_ready,
    wait_until,
)

pytestmark = [pytest.mark.redis, pytest.mark.slow]

REDIS_PORT = 6379
REDIS_DB = 5
OLOPROOF = str(Path(sys.executable).parent / "oloproof")


@pytest.fixture
def suite(tmp_path: Path) -> Path:
    folder = tmp_path / "orders-desk"
    leftovers = shutil.ignore_patterns(".oloproof", "*.json", "requests.jsonl", "__pycache__")
    shutil.copytree(REPO / "examples" / "agents", folder, ignore=leftovers)
    return folder


@pytest.fixture
def scripted_model(suite: Path) -> Iterator[str]:
    server = subprocess.Popen(
        [sys.executable, "scripted_model.py", "--port", "0", "--log", "requests.jsonl"],
        cwd=suite,
        env=user_env(),
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert server.stdout is not None
        yield server.stdout.readline().split()[1]
    finally:
        server.terminate()
        server.wait(timeout=30)


def submit(running: Platform, folder: Path, config: str, model: str) -> dict[str, Any]:
    done = subprocess.run(
        [OLOPROOF, "run", config, "--submit", "--wait", "--json", "there.json"],
        cwd=folder,
        env={**running.env, **model_env(model), "OLOPROOF_RECORD": "1"},
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert done.returncode in (0, 1), done.stdout + done.stderr + running.log_text()
    result: dict[str, Any] = json.loads((folder / "there.json").read_text())
    return result


def model_env(base_url: str) -> dict[str, str]:
    return {
        "OLOPROOF_SYSTEM_MODEL": "scripted",
        "OLOPROOF_SYSTEM_BASE_URL": base_url,
        "OLOPROOF_SYSTEM_API_KEY": "none",
        "OLOPROOF_SYSTEM_PRICE_IN": "0.15",
        "OLOPROOF_SYSTEM_PRICE_OUT": "0.6",
    }


def api_for(running: Platform, folder: Path) -> Api:
    made = subprocess.run(
        [OLOPROOF, "user", "create", "reader", "--viewer"],
        cwd=folder, env=running.env, capture_output=True, text=True, check=True,
    )  # fmt: skip
    assert made.returncode == 0
    token = subprocess.run(
        [OLOPROOF, "token", "create", "reader", "--name", "t"],
        cwd=folder, env=running.env, capture_output=True, text=True, check=True,
    ).stdout  # fmt: skip
    port = free_port()
    running.start(["serve", "--no-worker", f"--port={port}"], name="serve")
    wait_until(lambda: server_ready(port), timeout=60, what="the site to serve")
    return Api(f"http://127.0.0.1:{port}", next(w for w in token.split() if len(w) > 30))


def model_calls(case: dict[str, Any]) -> int:
    return sum(step["kind"] == "model_call" for step in case["trace"]["steps"])


def test_agents_on_the_workers_keep_every_call_turn_and_workspace(
    tmp_path: Path, suite: Path, scripted_model: str
) -> None:
    redis_flush(REDIS_PORT, REDIS_DB)
    # The product's own stale interval, not the fault tests' two seconds: a heartbeat
    # late on a loaded machine would hand a chunk to the other process, which asks the
    # model again, and those repeated calls are rightly in no transcript.
    with platform(
        tmp_path, broker_url=redis_url(REDIS_PORT, REDIS_DB), chunk_size=25, stale_after_s=60
    ) as running:
        running.migrate_server_database()
        running.start(
            ["worker", "--concurrency=2", "--loglevel=WARNING"],
            name="worker",
            extra_env=model_env(scripted_model),
        )
        tasks = submit(running, suite, "oloproof.yaml", scripted_model)
        answered = len((suite / "requests.jsonl").read_text().splitlines())
        talks = submit(running, suite, "conversations.yaml", scripted_model)
        workspace = submit(running, suite / "workspace", "oloproof.yaml", scripted_model)
        api = api_for(running, suite)
        first = tasks["cases"][0]["id"]
        kept = api.get(f"/api/runs/1/transcript?case_id={first}")

    assert tasks["provenance"]["execution"]["mode"] == "workers"
    assert len(tasks["cases"]) == 60
    assert all(model_calls(case) >= 1 for case in tasks["cases"])
    assert sum(model_calls(case) for case in tasks["cases"]) == answered
    assert kept["steps"] == tasks["cases"][0]["trace"]["steps"]
    for case in talks["cases"]:  # two customer messages, a turn each
        assert len(case["output"]["replies"]) == 2, case["id"]
        assert model_calls(case) >= 2, case["id"]
    passed = {case["id"]: case["verdicts"]["tests"]["value"] for case in workspace["cases"]}
    assert passed == {"add": 1.0, "greet": 1.0, "halve": 0.0}
