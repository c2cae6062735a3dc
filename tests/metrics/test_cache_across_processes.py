"""The verdict cache outlives the process: recorded by default into the local store.

Each run below is a separate Python process sharing one data folder. The evaluators
append a line to a file on every call, so the calls are counted, not inferred.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tests.support.embedded import embedded_store_env

N_CASES = 12

BOT = """
from oloproof import system

@system(name="counter-bot", version="1")
def answer(case):
    return {"label": "refund" if "refund" in case["question"] else "other"}
"""

CHECK = """
from oloproof.evaluators import evaluator

# Reading the input too gives every case a cache key of its own (cases that share a key
# are judged once per run), so the verdicts judged count cases.
@evaluator(criterion="{criterion}", reads=("input", "output"))
def check(case):
    return case.output["label"] in {{"refund", "other"}}
"""

RUNNER = """
import json, sys
sys.path.insert(0, sys.argv[1])
from oloproof import evaluate
from bot import answer
from check_a import check as check_a
from check_b import check as check_b


rows = [{"id": f"c{i}", "input": {"question": ("refund" if i % 2 else "parcel") + f" {i}"}}
        for i in range(int(sys.argv[2]))]
result = evaluate(answer, rows, [check_a, check_b], concurrency=1)
print(json.dumps({"run_id": result.run_id, "judging": result.provenance["judging"]}))
"""


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "bot.py").write_text(BOT)
    (tmp_path / "check_a.py").write_text(CHECK.format(criterion="check_a"))
    (tmp_path / "check_b.py").write_text(CHECK.format(criterion="check_b"))
    (tmp_path / "runner.py").write_text(RUNNER)
    return tmp_path


def run_process(project: Path, *, record: str = "1") -> dict:
    env = embedded_store_env(project / "data", record=record)
    completed = subprocess.run(
        [sys.executable, str(project / "runner.py"), str(project), str(N_CASES)],
        capture_output=True,
        text=True,
        env=env,
        cwd=project,
        timeout=120,
        check=False,
    )
    assert completed.returncode == 0, completed.stderr
    return json.loads(completed.stdout.strip().splitlines()[-1])


def judged(run: dict, *names: str) -> tuple[int, ...]:
    """How many verdicts of each evaluator the run judged afresh (not from the cache).

    Counted by the run itself: evaluators judge in sandboxed processes of their own,
    where a log file of theirs could not be written."""
    return tuple(run["judging"][name]["judged"] for name in names)


def test_second_process_judges_nothing_and_an_edit_rejudges_only_that_evaluator(
    project: Path,
) -> None:
    first = run_process(project)
    assert judged(first, "check_a", "check_b") == (N_CASES, N_CASES)
    assert first["run_id"] == "1"
    assert (project / "data" / "oloproof.sqlite3").exists()

    second = run_process(project)
    assert judged(second, "check_a", "check_b") == (0, 0)
    assert second["run_id"] == "2"
    assert second["judging"]["check_a"]["cached"] == N_CASES

    check_b = project / "check_b.py"
    check_b.write_text(check_b.read_text() + "\n# tightened wording of the rule\n")
    third = run_process(project)
    assert judged(third, "check_a", "check_b") == (0, N_CASES)
    assert third["judging"]["check_a"]["cached"] == N_CASES
    assert third["judging"]["check_b"]["judged"] == N_CASES


def test_recording_can_be_turned_off(project: Path) -> None:
    run_process(project)
    off = run_process(project, record="0")
    assert off["run_id"] == "mem-1"
    assert judged(off, "check_a") == (N_CASES,)  # the in-memory cache starts empty


def test_the_cli_records_its_runs_too(project: Path) -> None:
    config = project / "oloproof.yaml"
    config.write_text(
        textwrap.dedent(
            """
            system: bot.py:answer
            dataset: data.jsonl
            evaluators:
              - check_a.py:check
            """
        )
    )
    with open(project / "data.jsonl", "w") as handle:
        for i in range(4):
            handle.write(json.dumps({"id": f"c{i}", "input": {"question": f"refund {i}"}}) + "\n")
    env = embedded_store_env(project / "data")
    cli = Path(sys.executable).with_name("oloproof")
    fresh = []
    for flags, expected_run in (([], "1"), (["--no-record"], None), ([], "2")):
        completed = subprocess.run(
            [str(cli), "run", str(config), "--json", "-", *flags],
            capture_output=True,
            text=True,
            env=env,
            cwd=project,
            timeout=120,
            check=False,
        )
        assert completed.returncode == 0, completed.stderr
        printed = json.loads(completed.stdout)
        assert printed["run_id"] == expected_run
        fresh.append(printed["provenance"]["judging"]["check_a"]["judged"])
    assert fresh == [4, 0, 0]  # the recorded run's verdicts serve the next runs
