"""Latency and cost on the workers: one config, run once in one process and once with
`oloproof run --submit --wait` on a real Celery worker over Redis, gives the same latency
and cost figures (the same cost figures to the last digit: each case costs exactly
$0.01) and the gate decides the latency and cost rules on both; `oloproof gate`, the
REST API and the run page read the worker run's figures as they read any run's.

The system asks the stand-in OpenAI-compatible server for each label, through the
metering gateway at $1,000 per million input tokens; nine cases in ten get it right.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.support.fake_openai import FakeOpenAI
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
from tests.support.priced_project import (
    N_CASES,
    labelled,
    priced_model_env,
    write_priced_project,
)

pytestmark = pytest.mark.redis

REDIS_PORT = 6379
REDIS_DB = 6
OLOPROOF = str(Path(sys.executable).parent / "oloproof")
PAGE = """
from django.contrib.auth.models import User
from django.test import Client

client = Client(HTTP_HOST="127.0.0.1")
client.force_login(User.objects.get(username="reader"))
print(client.get("/runs/{run_id}/").content.decode())
"""


def command(
    running: Platform, folder: Path, server: FakeOpenAI, *args: str, timeout: float = 300
) -> tuple[int, str, str]:
    """The installed `oloproof` in the user's folder, recording into the platform's store."""
    done = subprocess.run(
        [OLOPROOF, *args],
        cwd=folder,
        env={**running.env, **priced_model_env(server), "OLOPROOF_RECORD": "1"},
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
    return done.returncode, done.stdout, done.stderr


def by_metric(measured: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {item["metric"]: item for item in measured}


def shape(item: dict[str, Any]) -> tuple[Any, ...]:
    """What two runs of the same cases share whatever their times: all but the values."""
    return (item["metric"], item["n_observed"], item["n_missing"], item["method"],
            item["unbounded"], item["confidence"])  # fmt: skip


@pytest.fixture
def folder(tmp_path: Path, fake_openai: FakeOpenAI) -> Path:
    fake_openai.respond_with(labelled)
    return write_priced_project(tmp_path / "latency-cost")


def start_site(running: Platform, folder: Path, server: FakeOpenAI) -> Api:
    """The site, a reader's account and an API token, as an operator makes them."""
    code, out, err = command(running, folder, server, "user", "create", "reader", "--viewer")
    assert code == 0, out + err
    code, out, err = command(running, folder, server, "token", "create", "reader", "--name", "t")
    assert code == 0, out + err
    token = next(word for word in out.split() if len(word) > 30)
    port = free_port()
    running.start(["serve", "--no-worker", f"--port={port}"], name="serve")
    wait_until(lambda: server_ready(port), timeout=60, what="the site to serve")
    return Api(f"http://127.0.0.1:{port}", token)


def test_a_run_on_the_workers_has_the_figures_and_the_gate_of_a_run_here(
    tmp_path: Path, folder: Path, fake_openai: FakeOpenAI
) -> None:
    redis_flush(REDIS_PORT, REDIS_DB)
    with platform(tmp_path, broker_url=redis_url(REDIS_PORT, REDIS_DB), chunk_size=40) as running:
        running.migrate_server_database()
        here = command(running, folder, fake_openai, "run", "oloproof.yaml", "--json", "here.json")
        assert here[0] == 0, here[1] + here[2]
        assert "recorded run #1" in here[2]
        running.start(
            ["worker", "--concurrency=2", "--loglevel=WARNING"],
            name="worker",
            extra_env=priced_model_env(fake_openai),
        )
        code, said, log = command(
            running, folder, fake_openai,
            "run", "oloproof.yaml", "--submit", "--wait", "--json", "there.json",
        )  # fmt: skip
        assert code == 0, said + log + running.log_text()  # 0: the gate passed
        assert fake_openai.request_count == 2 * N_CASES
        gates = {
            policy: command(running, folder, fake_openai, "gate", "2", policy)
            for policy in ("tight.yaml", "close.yaml")
        }
        api = start_site(running, folder, fake_openai)
        detail = api.get("/api/runs/2")
        page = running.python(PAGE.format(run_id=2))

    here_result = json.loads((folder / "here.json").read_text())
    there = json.loads((folder / "there.json").read_text())
    assert there["provenance"]["execution"]["mode"] == "workers"
    assert there["provenance"]["execution"]["chunks"] == 3
    mine, theirs = by_metric(here_result["measured"]), by_metric(there["measured"])
    assert list(theirs) == [
        "latency_p50_ms", "latency_p95_ms", "cost_per_case_usd", "cost_per_success_usd"
    ]  # fmt: skip
    assert [shape(item) for item in theirs.values()] == [shape(item) for item in mine.values()]
    assert theirs["latency_p95_ms"]["n_observed"] == N_CASES
    assert theirs["latency_p95_ms"]["interval"]["upper"] is not None
    for name in ("cost_per_case_usd", "cost_per_success_usd"):  # every case cost $0.01
        assert theirs[name] == mine[name]
    assert theirs["cost_per_success_usd"]["estimate"] == pytest.approx(0.01 / 0.9)
    # The run's conclusion kept the figures with it, as a run here does.
    assert there["provenance"]["measured"] == there["measured"]

    # The gate decided both rules on the workers, as here.
    for result in (here_result, there):
        assert result["gate"]["outcome"] == "pass"
        assert [rule["outcome"] for rule in result["gate"]["rules"]] == ["pass", "pass"]
    assert [r["figures"]["interval"] for r in there["gate"]["rules"]][1] == [
        r["figures"]["interval"] for r in here_result["gate"]["rules"]
    ][1]
    assert "latency and cost (measured by oloproof, 95% intervals):" in said
    assert re.search(r"cost_per_success_usd: \$0\.011111 \[\$0\.0\d+, \$0\.0\d+\]", said), said

    # `oloproof gate` on the worker's run by its number: fail, and inconclusive.
    code, out, err = gates["tight.yaml"]
    assert code == 1, out + err
    assert re.search(r"latency_p50_ms ≤ 0\.01 fail", out), out
    assert re.search(r"cost_per_case_usd ≤ 0\.005 fail", out), out
    code, out, err = gates["close.yaml"]
    assert code == 2, out + err
    assert "latency_p95_ms ≤ 60000 pass" in out
    assert re.search(r"cost_per_success_usd ≤ 0\.0115 inconclusive \(interval", out), out

    # The REST API and the run page show the figures the run was concluded with.
    assert detail["provenance"]["measured"] == there["measured"]
    assert '<section class="card" id="measured">' in page
    assert page.count("<tr data-figure=") == 4
    assert 'data-figure="cost_per_success_usd"' in page
