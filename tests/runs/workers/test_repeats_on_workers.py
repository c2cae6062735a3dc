"""Repeats on the workers: a run submitted with `oloproof run --submit --repeats 3` and run
by a real Celery worker over Redis gives what the same run gives in one process: the same
repeat ids, outputs and verdicts, the same clusters and metrics, and the same pass@k,
pass^k and flaky cases (`provenance.repeats`)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.support.platform import PYTHON, Platform, platform, redis_flush, redis_url

pytestmark = pytest.mark.redis

REDIS_PORT = 6379
REDIS_DB = 9

BOT = '''
from oloproof import current_case, system


@system(name="flaky-bot", version="1")
def answer(question):
    """q0, q1 right; q2, q3 wrong; q4, q5 wrong on their second repeat only."""
    me = current_case().id
    wrong = question["q"] in (2, 3) or (question["q"] >= 4 and me.endswith("#r2"))
    return {"label": "b" if wrong else "a", "seen": me}
'''
CONFIG = """system: bot.py:answer
dataset: data.jsonl
evaluators:
  - ExactMatch: {criterion: right, field: label}
"""


def _project(folder: Path) -> Path:
    folder.mkdir(parents=True)
    (folder / "bot.py").write_text(BOT, encoding="utf-8")
    with (folder / "data.jsonl").open("w", encoding="utf-8") as handle:
        for i in range(6):
            row = {"id": f"q{i}", "input": {"q": i}, "expected": {"label": "a"}}
            handle.write(json.dumps(row) + "\n")
    (folder / "oloproof.yaml").write_text(CONFIG, encoding="utf-8")
    return folder / "oloproof.yaml"


def _here(running: Platform, *args: str) -> subprocess.CompletedProcess[str]:
    """`oloproof ARGS` in one process on the workers' store (the test session's own
    processes record nothing unless told to)."""
    return subprocess.run(
        [PYTHON, "-m", "oloproof", *args],
        cwd=running.root,
        env={**running.env, "OLOPROOF_RECORD": "1"},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def _recorded_here(
    running: Platform, config: Path, repeats: str = "3"
) -> subprocess.CompletedProcess[str]:
    """`oloproof run --repeats 3` in one process, recorded in the workers' store."""
    return _here(
        running, "run", str(config), "--repeats", repeats, "--json", f"here-{repeats}.json"
    )


def _cases(result: dict[str, Any]) -> list[tuple[Any, ...]]:
    return [
        (case["id"], case["output"], case["verdicts"]["right"]["value"], case.get("repeat"))
        for case in result["cases"]
    ]


def _metrics(result: dict[str, Any]) -> list[tuple[Any, ...]]:
    return [
        (m["metric"], m["estimate"], m["interval"], m["n_clusters"], m["method"])
        for m in result["metrics"]
    ]


def test_a_submitted_run_repeats_each_case_as_the_same_run_in_one_process(
    tmp_path: Path,
) -> None:
    redis_flush(REDIS_PORT, REDIS_DB)
    config = _project(tmp_path / "project")
    with platform(tmp_path, broker_url=redis_url(REDIS_PORT, REDIS_DB), chunk_size=5) as running:
        running.migrate_server_database()
        here = _recorded_here(running, config)
        assert here.returncode == 0, here.stderr
        assert "recorded run #1" in here.stderr
        running.worker(concurrency=2)
        submitted = running.call(
            ["run", str(config), "--submit", "--repeats", "3", "--wait", "--json", "there.json"],
            timeout=240,
        )
        twice = _recorded_here(running, config, "2")
        compared = _here(running, "compare", "3", "2")
        log = running.log_text()
        datasets = running.database.rows("SELECT dataset_id FROM runs_run ORDER BY id")
        chunks = running.database.chunk_counts(2)

    assert submitted.returncode == 0, submitted.stderr + log
    assert "run #2 queued (18 cases)" in submitted.stderr
    here_result = json.loads((tmp_path / "here-3.json").read_text())
    there = json.loads((tmp_path / "there.json").read_text())
    ids = [f"q{i}#r{j}" for i in range(6) for j in (1, 2, 3)]
    assert [case[0] for case in _cases(there)] == ids
    assert _cases(there) == _cases(here_result)
    assert there["cases"][4]["output"]["seen"] == "q1#r2"  # the system saw the repeat's id
    assert _metrics(there) == _metrics(here_result)
    assert there["metrics"][0]["n_clusters"] == 6
    assert there["provenance"]["repeats"] == here_result["provenance"]["repeats"]
    figures = there["provenance"]["repeats"]["metrics"][0]
    assert (figures["stable_pass"], figures["stable_fail"], figures["flaky"]) == (2, 2, 2)
    assert figures["flaky_cases"] == ["q4", "q5"]
    assert "2 stable pass, 2 stable fail, 2 flaky (q4, q5)" in submitted.stdout
    # Both runs are over one recorded dataset: the file's cases, each three times.
    assert datasets[0] == datasets[1]
    assert sum(chunks.values()) == 4  # 18 repeats in chunks of 5
    assert there["provenance"]["execution"]["mode"] == "workers"
    # A run of the same file twice per case pairs with the workers' run on case means.
    assert twice.returncode == 0, twice.stderr
    assert compared.returncode == 0, compared.stderr + log
    assert "The runs repeated each case 2 and 3 times" in compared.stdout
    assert "6 cases (6 in both runs)" in compared.stdout
    named = there["provenance"]["dataset"]["unrepeated_digest"]
    assert named == here_result["provenance"]["dataset"]["unrepeated_digest"]
    assert named != there["provenance"]["dataset"]["digest"]


def test_auto_on_the_workers_tries_as_the_earlier_runs_say_and_figures_as_in_one_process(
    tmp_path: Path,
) -> None:
    """`--repeats auto` queued after a run of three repeats: the workers run the stable
    cases once and the flaky ones five times, and conclude as one process concludes."""
    redis_flush(REDIS_PORT, REDIS_DB)
    config = _project(tmp_path / "project")
    with platform(tmp_path, broker_url=redis_url(REDIS_PORT, REDIS_DB), chunk_size=5) as running:
        running.migrate_server_database()
        assert _recorded_here(running, config).returncode == 0
        running.worker(concurrency=2)
        submitted = running.call(
            ["run", str(config), "--submit", "--repeats", "auto", "--wait", "--json", "there.json"],
            timeout=240,
        )
        here = _recorded_here(running, config, "auto")
        log = running.log_text()

    assert submitted.returncode == 0, submitted.stderr + log
    assert "run #2 queued (14 cases)" in submitted.stderr  # 4 stable once, 2 flaky 5 times
    there = json.loads((tmp_path / "there.json").read_text())
    assert [case["id"] for case in there["cases"]][:5] == [
        "q0#r1",
        "q1#r1",
        "q2#r1",
        "q3#r1",
        "q4#r1",
    ]
    auto = there["provenance"]["repeats"]["auto"]
    assert auto == {
        "most": 5, "evidence_runs": 1, "cases_once": 4, "cases_most": 2, "calls": 14,
        "uniform_calls": 30,
    }  # fmt: skip
    # q4 and q5 wrong on their second try only: 4 of 5; each case weighed once.
    assert there["metrics"][0]["estimate"] == pytest.approx((2 + 0.8 + 0.8) / 6)
    assert "each case weighed once" in there["metrics"][0]["method"]
    # The same allocation in one process (runs #1 and #2 read): the same figures.
    assert here.returncode == 0, here.stderr
    here_result = json.loads((tmp_path / "here-auto.json").read_text())
    assert here_result["provenance"]["repeats"]["auto"]["evidence_runs"] == 2
    assert _cases(there) == _cases(here_result)
    assert _metrics(there) == _metrics(here_result)
