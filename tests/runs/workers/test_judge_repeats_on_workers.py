"""Judge repeats on the workers: a config with a model judge, submitted with `oloproof run
--submit --judge-repeats 3 --wait` and judged by a real Celery worker over Redis, asks the
judge three times for every output (the stand-in server answering PASS, FAIL, PASS), and
gives what the same run gives in one process: each output's mean verdict, the criterion
as a score, every asking counted, and the split of the variance between system and
judge put together from every chunk (`provenance.judge_repeats`)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.journeys.test_judge_repeats import CONFIG as JOURNEY_CONFIG
from tests.support.fake_openai import FakeOpenAI
from tests.support.platform import PYTHON, Platform, platform, redis_flush, redis_url
from tests.support.wavering_judge import judge_environment, judge_that_wavers

pytestmark = pytest.mark.redis

HERE_FLAGS = ("--judge-repeats", "3", "--json", "here.json")
THERE_FLAGS = ("--judge-repeats", "3", "--json", "there.json")
REDIS_PORT = 6379
REDIS_DB = 4

BOT = """
from oloproof import current_case


def answer(question):
    return {"text": f"Thanks for asking about {question['q']} ({current_case().id})"}
"""
# The journey's config (a model judge and a Contains, repeats: 2); judge repeats come
# from the flag on both sides.
CONFIG = JOURNEY_CONFIG.replace("judge_repeats: 3\n", "")


def _project(folder: Path) -> Path:
    folder.mkdir(parents=True)
    (folder / "bot.py").write_text(BOT, encoding="utf-8")
    with (folder / "data.jsonl").open("w", encoding="utf-8") as handle:
        for i in range(4):
            handle.write(json.dumps({"id": f"q{i}", "input": {"q": i}, "expected": {}}) + "\n")
    (folder / "oloproof.yaml").write_text(CONFIG, encoding="utf-8")
    return folder / "oloproof.yaml"


def _here(running: Platform, config: Path, server: FakeOpenAI) -> dict[str, Any]:
    """The same run in one process, not recorded (its verdicts stay out of the workers'
    cache), for the figures to compare with."""
    done = subprocess.run(
        [PYTHON, "-m", "oloproof", "run", str(config), *HERE_FLAGS],
        cwd=running.root,
        env={**running.env, **judge_environment(server), "OLOPROOF_RECORD": "0"},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    here: dict[str, Any] = json.loads((running.root / "here.json").read_text())
    return here


def _values(result: dict[str, Any]) -> dict[str, float]:
    return {case["id"]: case["verdicts"]["polite"]["value"] for case in result["cases"]}


def test_a_submitted_run_asks_the_judge_again_as_a_run_in_one_process_does(
    tmp_path: Path, fake_openai: FakeOpenAI
) -> None:
    redis_flush(REDIS_PORT, REDIS_DB)
    config = _project(tmp_path / "project")
    with platform(tmp_path, broker_url=redis_url(REDIS_PORT, REDIS_DB), chunk_size=3) as running:
        running.migrate_server_database()
        judge_that_wavers(fake_openai)
        here = _here(running, config, fake_openai)
        judge_that_wavers(fake_openai)  # afresh: the workers' askings count from one
        asked_before = fake_openai.request_count
        running.worker(concurrency=2, extra_env=judge_environment(fake_openai))
        submitted = running.call(
            ["run", str(config), "--submit", "--wait", *THERE_FLAGS],
            timeout=240,
            extra_env=judge_environment(fake_openai),
        )
        log = running.log_text()
        chunks = running.database.value("SELECT COUNT(*) FROM runs_runchunk")

    assert submitted.returncode == 0, submitted.stderr + log
    assert "run #1 queued (8 cases)" in submitted.stderr
    assert chunks == 3  # 8 outputs in chunks of 3: the askings come from three chunks
    # Every output three times, none read from another's verdict.
    assert fake_openai.request_count - asked_before == 8 * 3
    there = json.loads((tmp_path / "there.json").read_text())
    assert _values(there) == _values(here)
    assert list(_values(there).values()) == [pytest.approx(2 / 3)] * 8  # PASS, FAIL, PASS
    polite = next(m for m in there["metrics"] if m["metric"] == "polite")
    assert polite["value_type"] == "score"
    assert polite["estimate"] == pytest.approx(2 / 3)
    assert [m["interval"] for m in there["metrics"]] == [m["interval"] for m in here["metrics"]]
    judging = there["provenance"]["judging"]
    assert judging["polite"]["judged"] == 24
    assert judging["thanks"]["judged"] + judging["thanks"]["cached"] == 8  # once per output
    figures = there["provenance"]["judge_repeats"]
    assert figures == here["provenance"]["judge_repeats"]
    (split,) = figures["metrics"]
    assert (figures["judge_repeats"], figures["repeats"], split["metric"]) == (3, 2, "polite")
    assert (split["outputs"], split["cases"]) == (8, 4)
    assert (split["judge_share"], split["system_share"]) == (1.0, 0.0)
    assert "judge repeats: each output judged 3 times" in submitted.stdout
    assert there["provenance"]["execution"]["mode"] == "workers"
