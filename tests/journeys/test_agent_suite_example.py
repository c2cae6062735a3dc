"""examples/agents, run as its README shows: a copy of the folder outside the repository,
its scripted model started with `python scripted_model.py`, `oloproof run oloproof.yaml
--json result.json`. The figures are the policy's known quality, and every model call the
scripted model answered is in a case's transcript.
"""

from __future__ import annotations

import importlib.util
import json
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from scipy.stats import beta

from tests.journeys.conftest import REPO, run_user, user_env

pytestmark = [pytest.mark.slow]

EXAMPLE = REPO / "examples" / "agents"


@pytest.fixture
def suite(tmp_path: Path) -> Path:
    folder = tmp_path / "orders-desk"
    # What a run of the example in place leaves behind is not part of it.
    leftovers = shutil.ignore_patterns(".oloproof", "result.json", "requests.jsonl", "__pycache__")
    shutil.copytree(EXAMPLE, folder, ignore=leftovers)
    assert REPO not in folder.parents
    return folder


@pytest.fixture
def scripted_model(suite: Path) -> Iterator[str]:
    """`python scripted_model.py --port 0 --log requests.jsonl`; its base URL."""
    python = str(Path(sys.executable).parent / "python")
    server = subprocess.Popen(
        [python, "scripted_model.py", "--port", "0", "--log", "requests.jsonl"],
        cwd=suite,
        env=user_env(),
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert server.stdout is not None
        line = server.stdout.readline()
        assert line.startswith("serving "), line
        yield line.split()[1]
    finally:
        server.terminate()
        server.wait(timeout=30)


def the_policy(folder: Path) -> Any:
    """The scripted model's module, imported from the copy: its rule, `picks_right`."""
    spec = importlib.util.spec_from_file_location("scripted_model", folder / "scripted_model.py")
    assert spec is not None
    assert spec.loader is not None
    policy = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(policy)
    return policy


def known_right(folder: Path, rows: list[dict[str, Any]]) -> dict[str, bool]:
    """Which tasks the policy gets right, by its own rule."""
    policy = the_policy(folder)
    return {row["id"]: policy.picks_right(row["input"]["question"]) for row in rows}


def test_the_example_suite_measures_the_scripted_policys_known_quality(
    suite: Path, scripted_model: str
) -> None:
    rows = [json.loads(line) for line in (suite / "data" / "tasks.jsonl").read_text().splitlines()]
    assert len(rows) >= 50
    gets_right = known_right(suite, rows)
    right = sum(gets_right.values())
    done = run_user(
        ["oloproof", "run", "oloproof.yaml", "--json", "result.json"],
        suite,
        timeout=600,
        OLOPROOF_SYSTEM_MODEL="scripted",
        OLOPROOF_SYSTEM_BASE_URL=scripted_model,
        OLOPROOF_SYSTEM_API_KEY="none",
        OLOPROOF_SYSTEM_PRICE_IN="0.15",
        OLOPROOF_SYSTEM_PRICE_OUT="0.6",
    )
    assert done.returncode == 0, done.stdout + done.stderr
    result = json.loads((suite / "result.json").read_text())
    metrics = {metric["criterion"]: metric for metric in result["metrics"]}
    n = len(rows)
    for criterion in ("right_tools", "looked_up", "right_answer"):
        metric = metrics[criterion]
        assert (metric["n_observed"], metric["n_missing"]) == (n, 0), metric
        assert metric["estimate"] == pytest.approx(right / n), criterion
        # The exact interval of the known count, and the policy's quality inside it.
        lower, upper = metric["interval"]["lower"], metric["interval"]["upper"]
        assert lower == pytest.approx(beta.ppf(0.025, right, n - right + 1))
        assert upper == pytest.approx(beta.ppf(0.975, right + 1, n - right))
        assert lower < 0.8 < upper
    assert metrics["few_calls"]["estimate"] == 1.0
    assert metrics["within_budget"]["estimate"] == 1.0  # measured by the platform, not the agent

    # Every case has its transcript, and every call the model answered is in one.
    cases = result["cases"]
    assert all(case["trace"] and case["trace"]["steps"] for case in cases)
    in_transcripts = sum(
        step["kind"] == "model_call" for case in cases for step in case["trace"]["steps"]
    )
    answered = (suite / "requests.jsonl").read_text().splitlines()
    # A right task: a call per expected tool and the answer; a wrong one skips the lookup.
    planned = sum(len(row["expected"]["tools"]) for row in rows) + right
    assert in_transcripts == len(answered) == planned
    for case in cases:
        calls = [s for s in case["trace"]["steps"] if s["kind"] == "model_call"]
        assert all(call["cost_usd"] > 0 for call in calls), case["id"]
        called = [tool["name"] for call in calls for tool in call.get("tool_calls") or ()]
        expected = case["expected"]["tools"]
        assert called == (expected if gets_right[case["id"]] else expected[1:]), case["id"]


def test_the_example_conversations_run_turn_by_turn_with_every_call_kept(
    suite: Path, scripted_model: str
) -> None:
    rows = [
        json.loads(line)
        for line in (suite / "data" / "conversations.jsonl").read_text().splitlines()
    ]
    policy = the_policy(suite)
    done = run_user(
        ["oloproof", "run", "conversations.yaml", "--json", "conversations.json"],
        suite,
        timeout=600,
        OLOPROOF_SYSTEM_MODEL="scripted",
        OLOPROOF_SYSTEM_BASE_URL=scripted_model,
        OLOPROOF_SYSTEM_API_KEY="none",
    )
    assert done.returncode in (0, 1), done.stdout + done.stderr
    result = json.loads((suite / "conversations.json").read_text())
    by_id = {case["id"]: case for case in result["cases"]}
    for row in rows:
        case = by_id[row["id"]]
        said: list[str] = []
        right_turns = []
        for turn in row["input"]["turns"]:
            said.append(turn["content"])
            right_turns.append(policy.picks_right(" / ".join(said)))
        # The conversation passes when every turn got its answer, by the policy's own rule.
        assert case["verdicts"]["right_reply"]["value"] == float(all(right_turns)), row["id"]
        assert case["output"]["replies"][-1] is not None
        calls = [s for s in case["trace"]["steps"] if s["kind"] == "model_call"]
        assert len(calls) >= len(row["input"]["turns"]), row["id"]
    in_transcripts = sum(
        step["kind"] == "model_call" for case in result["cases"] for step in case["trace"]["steps"]
    )
    assert in_transcripts == len((suite / "requests.jsonl").read_text().splitlines())


def test_the_example_workspace_tasks_are_judged_by_their_own_tests(suite: Path) -> None:
    done = run_user(
        ["oloproof", "run", "oloproof.yaml", "--json", "result.json"], suite / "workspace"
    )
    assert done.returncode in (0, 1), done.stdout + done.stderr
    result = json.loads((suite / "workspace" / "result.json").read_text())
    passed = {case["id"]: case["verdicts"]["tests"]["value"] for case in result["cases"]}
    assert passed == {"add": 1.0, "greet": 1.0, "halve": 0.0}
