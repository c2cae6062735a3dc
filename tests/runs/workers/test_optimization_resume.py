"""A worker SIGKILLed mid-search: the next worker resumes the optimization from its records,
without running or judging again any (candidate, case) that was recorded."""

from __future__ import annotations

import json
import re
from dataclasses import replace
from pathlib import Path

import pytest

from oloproof_core.optimize import candidate_digest
from tests.support.fake_openai import FakeOpenAI
from tests.support.optimize_task import (
    REFLECT_MODEL,
    model_environment,
    responder,
    rows,
    write_project,
)
from tests.support.platform import platform, redis_flush, redis_url, wait_until

# Workers and a broker for minutes: the quick pass (`scripts/test.sh --quick`) leaves it out.
pytestmark = [pytest.mark.redis, pytest.mark.slow]

REDIS_PORT = 6379
REDIS_DB = 13


def slow(request):  # type: ignore[no-untyped-def]
    return replace(responder(request), delay_s=0.04)


def test_a_killed_workers_optimization_resumes_without_rejudging(
    tmp_path: Path, fake_openai: FakeOpenAI
) -> None:
    fake_openai.respond_with(slow)
    redis_flush(REDIS_PORT, REDIS_DB)
    config = write_project(
        tmp_path / "project", budget={"metric_calls": 150}, extra={"concurrency": 1}
    )
    models = model_environment(fake_openai.base_url)
    with platform(tmp_path, broker_url=redis_url(REDIS_PORT, REDIS_DB)) as running:
        running.migrate_server_database()
        first = running.start(
            ["worker", "--concurrency=1", "--loglevel=WARNING"], name="first", extra_env=models
        )
        done = running.call(["optimize", str(config), "--submit"])
        assert done.returncode == 0, done.stderr
        optimization_id = int(done.stdout.split()[0])
        evaluations = "SELECT COUNT(*) FROM runs_optimizationevaluation WHERE optimization_id = ?"
        wait_until(
            lambda: running.database.value(evaluations, [optimization_id]) >= 12,
            timeout=60,
            what="the search to be under way",
        )
        running.kill(first)
        recorded = set(
            running.database.rows(
                "SELECT candidate_digest, case_id FROM runs_optimizationevaluation "
                "WHERE optimization_id = ?",
                [optimization_id],
            )
        )
        asked_before = fake_openai.request_count
        status = "SELECT status FROM runs_optimization WHERE id = ?"
        assert running.database.value(status, [optimization_id]) == "running"

        running.start(
            ["worker", "--concurrency=1", "--loglevel=WARNING"], name="second", extra_env=models
        )
        wait_until(
            lambda: running.database.value(status, [optimization_id]) in ("succeeded", "failed"),
            timeout=120,
            what=f"optimization {optimization_id} to finish\n{running.log_text()}",
        )
        row = running.database.rows(
            "SELECT status, error, attempts, winner_index, outcome FROM runs_optimization "
            "WHERE id = ?",
            [optimization_id],
        )[0]
        assert row[0] == "succeeded", row[1]
        assert row[2] == 2
        assert row[3] is not None
        outcome = row[4] if isinstance(row[4], dict) else json.loads(row[4])
        assert outcome["evaluations"]["replayed"] >= len(recorded)  # read back, not redone

    by_question = {item["input"]["question"]: item["id"] for item in rows()}
    question = re.compile(r"What is \d+ \+ \d+\?")
    redone = []
    for request in fake_openai.requests[asked_before:]:
        if request.model == REFLECT_MODEL:
            continue
        found = question.search(request.user_text)
        pair = (
            candidate_digest({"system_prompt": request.system_text}),
            by_question[found.group(0)] if found else None,
        )
        if pair in recorded:
            redone.append(pair)
    assert not redone, f"recorded evaluations run again after the resume: {redone[:3]}"
