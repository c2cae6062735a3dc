"""A run submitted through the REST API executes on a real Celery worker process over
Redis, and its results read back through the API (SQLite file, or PostgreSQL with
DATABASE_URL)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from oloproof_core.execution.isolation import sandbox_support
from tests.support.platform import (
    Api,
    Platform,
    free_port,
    platform,
    redis_flush,
    redis_url,
    server_ready,
    wait_until,
    write_project,
)

pytestmark = pytest.mark.redis

REDIS_PORT = 6379
REDIS_DB = 11
N_CASES = 45

SETUP = """
from django.contrib.auth.models import User
from django.core.management import call_command
from runs.writers.tokens import api_token_create

call_command("migrate", interactive=False, verbosity=0)
user = User.objects.create_superuser("ops", "ops@example.com", "a-long-test-password")
print(api_token_create(user=user, name="tests")[1])
"""
REGISTER = """
from runs.access import LOCAL
from runs.writers.projects import code_root_register, project_default_ensure

code_root_register(by=LOCAL, project=project_default_ensure(), path={folder!r})
"""


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Platform, Api, Path]]:
    redis_flush(REDIS_PORT, REDIS_DB)
    root = tmp_path_factory.mktemp("api")
    write_project(root / "project", n_cases=N_CASES)
    with platform(root, broker_url=redis_url(REDIS_PORT, REDIS_DB), chunk_size=20) as running:
        token = running.python(SETUP).strip().splitlines()[-1]
        running.python(REGISTER.format(folder=str(root / "project")))
        port = free_port()
        running.start(["serve", "--no-worker", f"--port={port}"], name="serve")
        running.worker(concurrency=2)
        wait_until(lambda: server_ready(port), timeout=60, what="the site to serve")
        yield running, Api(f"http://127.0.0.1:{port}", token), root / "project"


def submit(api: Api, project: Path, **overrides: object) -> int:
    config = {
        "system": "bot.py:answer",
        "dataset": "data.jsonl",
        "evaluators": [
            {"ExactMatch": {"criterion": "exact_label", "field": "label"}},
            "checks.py:short_label",
        ],
        "concurrency": 2,
        **overrides,
    }
    status, body = api.request("POST", "/api/runs", {"config": config, "base_dir": str(project)})
    assert status == 201, body
    assert body["status"] == "queued"
    return int(body["id"])


def test_a_run_submitted_through_the_api_runs_on_a_worker_and_reads_back(
    site: tuple[Platform, Api, Path],
) -> None:
    running, api, project = site
    run_id = submit(api, project)

    running.wait_for_run(run_id)
    run = api.get(f"/api/runs/{run_id}")
    assert run["status"] == "succeeded", run["error"]
    assert (run["system"], run["version"]) == ("queue-bot", "1")
    assert (run["cases_total"], run["cases_done"]) == (N_CASES, N_CASES)
    broken = [i for i in range(N_CASES) if i % 17 == 5]
    assert run["cases_failed"] == len(broken)
    execution = run["provenance"]["execution"]
    assert execution["mode"] == "workers"
    assert execution["isolation"] == "process"  # the system ran in processes of its own
    assert execution["chunks"] == 3  # 45 cases in chunks of 20
    # Every chunk's worker ran the system in a sandbox, or the run says it did not.
    sandboxed = sandbox_support().available
    assert execution["sandbox"]["on"] is sandboxed
    assert execution["measurements"] == ("protected" if sandboxed else "not protected")

    cases = api.get(f"/api/runs/{run_id}/cases?limit=500")
    assert cases["count"] == N_CASES
    assert sorted(case["case_id"] for case in cases["items"]) == [
        f"case_{i:05d}" for i in range(N_CASES)
    ]
    by_id = {case["case_id"]: case for case in cases["items"]}
    assert by_id["case_00005"]["error"]["type"] == "RuntimeError"
    assert by_id["case_00002"]["output"] == {"label": "refund"}
    assert {v["criterion"] for v in by_id["case_00002"]["verdicts"]} == {
        "exact_label",
        "short_label",
    }

    metrics = {m["metric"]: m for m in api.get(f"/api/runs/{run_id}/metrics")}
    exact = metrics["exact_label"]
    observed = [i for i in range(N_CASES) if i not in broken]
    assert exact["n_observed"] == len(observed)
    assert exact["n_missing"] == len(broken)
    # Rows whose id ends in 0 expect "wrong", which the bot never answers.
    correct = sum(1 for i in observed if i % 10)
    assert exact["estimate"] == pytest.approx(correct / len(observed))
    assert exact["lower"] <= exact["estimate"] <= exact["upper"]
    assert metrics["short_label"]["estimate"] == 1.0


def test_a_worker_runs_the_evaluator_file_as_it_is_now_not_as_it_was(
    site: tuple[Platform, Api, Path],
) -> None:
    running, api, project = site
    before = submit(api, project)
    running.wait_for_run(before)
    checks = project / "checks.py"
    checks.write_text(checks.read_text().replace("<= 6", "<= 3"), encoding="utf-8")

    after = submit(api, project)

    assert running.wait_for_run(after)["status"] == "succeeded"
    metrics = {m["metric"]: m for m in api.get(f"/api/runs/{after}/metrics")}
    assert metrics["short_label"]["estimate"] == 0.0  # "refund" and "other" are long now
    assert metrics["exact_label"]["estimate"] == pytest.approx(
        {m["metric"]: m for m in api.get(f"/api/runs/{before}/metrics")}["exact_label"]["estimate"]
    )

    def version(run_id: int) -> str:
        described = api.get(f"/api/runs/{run_id}")["provenance"]["evaluators"]
        return next(item["version"] for item in described if item["criterion"] == "short_label")

    assert version(after) != version(before)


def test_a_system_that_cannot_be_imported_is_refused_before_anything_is_queued(
    site: tuple[Platform, Api, Path],
) -> None:
    # The API loads the config as a worker would before queueing (the worker's own
    # failure to load code is tested in tests/runs/workers/test_execution_service.py).
    _, api, project = site
    before = api.get("/api/runs")["count"]
    status, body = api.request(
        "POST",
        "/api/runs",
        {
            "config": {
                "system": "no_such_module:answer",
                "dataset": "data.jsonl",
                "evaluators": [{"ExactMatch": {"criterion": "exact_label", "field": "label"}}],
            },
            "base_dir": str(project),
        },
    )
    assert status == 400, body
    assert "no_such_module" in str(body)
    assert api.get("/api/runs")["count"] == before
