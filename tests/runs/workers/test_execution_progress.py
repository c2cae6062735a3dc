"""On real Celery worker processes over Redis: progress advances case by case while a run
executes, a queued run already shows its status, release and policy, and "run more
cases" continues a sequential run to its decision from the command line (`oloproof
continue`), with the same decision as the engine's own sequential runner.

`oloproof run --submit --wait` draws one progress line that advances per case on a
terminal, and none when its stderr is not one.
"""

from __future__ import annotations

import json
import os
import pty
import re
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

import oloproof_core as engine
from tests.support.platform import (
    PYTHON,
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

# Workers and a broker for minutes: the quick pass (`scripts/test.sh --quick`) leaves it out.
pytestmark = [pytest.mark.redis, pytest.mark.slow]

REDIS_PORT = 6379
REDIS_DB = 14
CHUNK = 12
SLOW_CASES = 24
SEQUENTIAL_CASES = 60
BATCH = 10

SETUP = """
from django.contrib.auth.models import User
from django.core.management import call_command
from runs.access import LOCAL
from runs.writers.projects import code_root_register, project_default_ensure
from runs.writers.tokens import api_token_create

call_command("migrate", interactive=False, verbosity=0)
code_root_register(by=LOCAL, project=project_default_ensure(), path={root!r})
user = User.objects.create_superuser("ops", "ops@example.com", "a-long-test-password")
print(api_token_create(user=user, name="tests")[1])
"""


def with_policy(config: Path, policy: dict[str, Any]) -> Path:
    (config.parent / "release.yaml").write_text(yaml.safe_dump(policy), encoding="utf-8")
    with config.open("a", encoding="utf-8") as handle:
        handle.write("policy: release.yaml\n")
    return config


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Platform, Api, Path]]:
    redis_flush(REDIS_PORT, REDIS_DB)
    root = tmp_path_factory.mktemp("progress")
    slow = write_project(root / "slow", n_cases=SLOW_CASES, sleep_ms=300, concurrency=1)
    with_policy(slow, {"version": 1, "rules": [{"metric": "short_label", "min": 0.5}]})
    # The same run without the wait: for what is printed where no line is redrawn.
    quick = write_project(root / "quick", n_cases=SLOW_CASES, concurrency=1)
    with_policy(quick, {"version": 1, "rules": [{"metric": "short_label", "min": 0.5}]})
    sequential = write_project(root / "sequential", n_cases=SEQUENTIAL_CASES)
    rule = {"metric": "short_label", "min": 0.7}
    with_policy(sequential, {"version": 1, "sequential": {"batch": BATCH}, "rules": [rule]})
    repeated = write_project(root / "repeated", n_cases=SEQUENTIAL_CASES)
    with_policy(repeated, {"version": 1, "sequential": {"batch": BATCH}, "rules": [rule]})
    with repeated.open("a", encoding="utf-8") as handle:
        handle.write("repeats: 3\n")
    with platform(root, broker_url=redis_url(REDIS_PORT, REDIS_DB), chunk_size=CHUNK) as running:
        token = running.python(SETUP.format(root=str(root))).strip().splitlines()[-1]
        port = free_port()
        running.start(["serve", "--no-worker", f"--port={port}"], name="serve")
        wait_until(lambda: server_ready(port), timeout=90, what="the site to serve")
        yield running, Api(f"http://127.0.0.1:{port}", token), root


def follow(api: Api, run_id: int, *, timeout: float = 120) -> list[dict[str, Any]]:
    """Every state the API shows of the run, polled every 0.1 s until it finishes."""
    seen: list[dict[str, Any]] = []
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        run = api.get(f"/api/runs/{run_id}")
        seen.append(run)
        if run["status"] in ("succeeded", "failed"):
            return seen
        time.sleep(0.1)
    raise AssertionError(f"run {run_id} did not finish: {seen[-1]}")


def test_a_queued_run_shows_its_release_and_policy_and_progress_advances_per_case(
    site: tuple[Platform, Api, Path],
) -> None:
    running, api, root = site
    run_id = running.submit(root / "slow" / "oloproof.yaml")

    queued = api.get(f"/api/runs/{run_id}")
    assert queued["status"] == "queued"
    assert (queued["system"], queued["version"]) == ("queue-bot", "1")
    assert re.fullmatch(r"[0-9a-f]{64}", queued["policy_digest"])
    assert (queued["cases_done"], queued["cases_total"]) == (0, SLOW_CASES)

    worker = running.worker(concurrency=1, name="slow-worker")
    try:
        seen = follow(api, run_id)
    finally:
        running.kill(worker)
    final = seen[-1]
    assert final["status"] == "succeeded", final["error"]
    assert final["policy_digest"] == queued["policy_digest"]
    counts = [run["cases_done"] for run in seen]
    assert counts == sorted(counts), "progress went backwards"
    between = {count for count in counts if 0 < count < SLOW_CASES}
    # Counted per case as the worker goes, not per finished chunk of 12.
    assert between - {CHUNK}, counts
    assert len(between) >= 3, counts
    assert all(run["status"] == "running" for run in seen if 0 < run["cases_done"] < SLOW_CASES)


def engine_until_decided(config: Path) -> engine.Result:
    # In this process, as the config's code is imported only when it asks for threads.
    loaded = engine.run_config_from_mapping(
        {**yaml.safe_load(config.read_text(encoding="utf-8")), "isolation": "thread"},
        base_dir=str(config.parent),
        label=str(config),
    )
    return engine.run_until_decided(
        system=loaded.system,
        dataset=loaded.dataset,
        evaluators=loaded.evaluators,
        store=engine.InMemoryStore(),
        policy=loaded.policy,
        record=False,
        isolation="thread",
        repeats=loaded.repeats,
    )


def test_run_more_cases_continues_the_same_run_on_the_workers_to_a_decision(
    site: tuple[Platform, Api, Path],
) -> None:
    running, api, root = site
    config = root / "sequential" / "oloproof.yaml"
    worker = running.worker(concurrency=2, name="sequential-worker")
    try:
        run_id = running.submit(config)
        first = follow(api, run_id)[-1]
        assert first["status"] == "succeeded", first["error"]
        assert api.get(f"/api/runs/{run_id}/gate")["outcome"] == "inconclusive"
        assert (first["cases_done"], first["cases_total"]) == (BATCH, BATCH)

        done = running.call(["continue", str(run_id), "--wait", "--json", "-"], timeout=300)
    finally:
        running.kill(worker)
    assert done.returncode == 0, done.stderr  # the gate passed
    printed = json.loads(done.stdout)
    expected = engine_until_decided(config)
    run = api.get(f"/api/runs/{run_id}")
    sequential = run["provenance"]["sequential"]
    assert printed["gate"]["outcome"] == expected.gate.outcome == "pass"
    assert api.get(f"/api/runs/{run_id}/gate")["outcome"] == "pass"
    assert sequential["looks"] == expected.provenance["sequential"]["looks"] > 1
    assert sequential["n_run"] == len(expected.cases) < SEQUENTIAL_CASES
    assert run["cases_done"] == run["cases_total"] == len(expected.cases)
    cases = api.get(f"/api/runs/{run_id}/cases?limit=500")["items"]
    assert [case["case_id"] for case in cases] == [case.id for case in expected.cases]

    again = running.call(["continue", str(run_id)])
    assert again.returncode == 3
    assert "is decided (pass)" in again.stderr
    assert "Traceback" not in again.stderr


def test_run_more_cases_of_a_repeated_run_adds_whole_cases_on_the_workers(
    site: tuple[Platform, Api, Path],
) -> None:
    """`repeats: 3` with a sequential policy, from `oloproof run --submit` to `oloproof
    continue`: each batch is ten whole cases, thirty rows, and the decision the engine's."""
    running, api, root = site
    config = root / "repeated" / "oloproof.yaml"
    worker = running.worker(concurrency=2, name="repeated-worker")
    try:
        run_id = running.submit(config)
        first = follow(api, run_id)[-1]
        assert first["status"] == "succeeded", first["error"]
        assert (first["cases_done"], first["cases_total"]) == (3 * BATCH, 3 * BATCH)
        done = running.call(["continue", str(run_id), "--wait", "--json", "-"], timeout=300)
    finally:
        running.kill(worker)
    assert done.returncode == 0, done.stderr  # the gate passed
    expected = engine_until_decided(config)
    run = api.get(f"/api/runs/{run_id}")
    sequential = run["provenance"]["sequential"]
    assert json.loads(done.stdout)["gate"]["outcome"] == expected.gate.outcome == "pass"
    assert (sequential["repeats"], sequential["horizon"]) == (3, SEQUENTIAL_CASES)
    assert sequential["n_run"] == expected.provenance["sequential"]["n_run"]
    assert run["cases_done"] == len(expected.cases) == 3 * sequential["n_run"]
    cases = api.get(f"/api/runs/{run_id}/cases?limit=500")["items"]
    assert [case["case_id"] for case in cases] == [case.id for case in expected.cases]


def wait_with_a_terminal(running: Platform, config: Path) -> str:
    """`oloproof run --submit --wait` with its stderr on a pseudo-terminal; what it drew."""
    leader, follower = pty.openpty()
    process = subprocess.Popen(
        [PYTHON, "-m", "oloproof", "run", str(config), "--submit", "--wait"],
        cwd=running.root,
        env=running.env,
        stdout=subprocess.DEVNULL,
        stderr=follower,
    )
    os.close(follower)
    drawn = b""
    while True:
        try:
            chunk = os.read(leader, 4096)
        except OSError:  # the terminal closed: the command ended
            break
        if not chunk:
            break
        drawn += chunk
    process.wait(timeout=120)
    os.close(leader)
    assert process.returncode == 0, drawn.decode(errors="replace")
    return drawn.decode(errors="replace")


@pytest.mark.one_database  # what a terminal shows; the database has no part in it
def test_wait_draws_a_progress_line_per_case_on_a_terminal_and_none_elsewhere(
    site: tuple[Platform, Api, Path],
) -> None:
    running, _, root = site
    config = root / "slow" / "oloproof.yaml"
    worker = running.worker(concurrency=1, name="wait-worker")
    try:
        drawn = wait_with_a_terminal(running, config)
        # A pipe shows no redrawn line whatever the pace: a quick run says as much.
        quick = root / "quick" / "oloproof.yaml"
        piped = running.call(["run", str(quick), "--submit", "--wait"])
        quiet = running.call(["run", str(quick), "--submit", "--wait", "--json", "-"])
    finally:
        running.kill(worker)
    redrawn = re.findall(r"\r[^\r\n]*?(\d+)/24", drawn)
    counts = {int(count) for count in redrawn}
    assert len(counts & set(range(1, SLOW_CASES))) >= 3, drawn
    assert "24/24" in drawn

    for done in (piped, quiet):
        assert done.returncode == 0, done.stderr
        assert "\r" not in done.stderr
        # A line per change of status, not per case.
        status_lines = [line for line in done.stderr.splitlines() if " cases" in line]
        assert len(status_lines) <= 4, done.stderr
    assert json.loads(quiet.stdout)["gate"]["outcome"] == "pass"
