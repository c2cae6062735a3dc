"""Tasks with a workspace along the user's path: docs/agents.md's agent, tasks and run
config in a folder outside the repository, `oloproof run` through the command, and the
tests judged in each workspace as the agent left it; then a task whose file path leaves
the workspace, missing alone with its file and line.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from tests.journeys.conftest import REPO, run_user

pytestmark = [pytest.mark.slow]

HEADING = "Tasks with a workspace"

GREET = 'def greet(name):\n    return f"Hello, {name}!"\n'
TEST_GREET = (
    "import unittest\n\nfrom greet import greet\n\n\n"
    "class TestGreet(unittest.TestCase):\n"
    "    def test_greet(self):\n"
    '        self.assertEqual(greet("Ada"), "Hello Ada!")\n'
)
ESCAPE = {
    "id": "escape",
    "input": {
        "edit": {"file": "calc.py", "old": "a", "new": "b"},
        "files": {"calc.py": "a = 1\n", "../evil.py": "print('outside')\n"},
    },
}


def doc_block(language: str) -> str:
    text = (REPO / "docs" / "agents.md").read_text(encoding="utf-8")
    section = text.split(f"\n## {HEADING}\n", 1)[1].split("\n## ", 1)[0]
    return re.findall(rf"```{language}\n(.*?)```", section, flags=re.S)[0]


@pytest.fixture
def tasks_folder(tmp_path: Path) -> Path:
    folder = tmp_path / "fix-the-bugs"
    (folder / "data" / "tasks" / "greet").mkdir(parents=True)
    assert REPO not in folder.parents
    (folder / "agent.py").write_text(doc_block("python"), encoding="utf-8")
    (folder / "data" / "tasks.jsonl").write_text(doc_block("json"), encoding="utf-8")
    (folder / "data" / "tasks" / "greet" / "greet.py").write_text(GREET, encoding="utf-8")
    (folder / "data" / "tasks" / "greet" / "test_greet.py").write_text(TEST_GREET)
    (folder / "oloproof.yaml").write_text(doc_block("yaml"), encoding="utf-8")
    return folder


def run(folder: Path, out: str) -> tuple[dict[str, Any], str]:
    done = run_user(["oloproof", "run", "oloproof.yaml", "--json", out], folder, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Traceback" not in done.stderr
    cases = json.loads((folder / out).read_text(encoding="utf-8"))["cases"]
    return {case["id"]: case for case in cases}, done.stdout


def test_the_agent_fixes_bugs_in_its_workspaces_and_the_tests_are_run_there(
    tasks_folder: Path,
) -> None:
    cases, shown = run(tasks_folder, "first.json")
    assert all(case["error"] is None for case in cases.values()), cases
    # The agent's own test run in its sandbox, and the evaluator's in a copy of what it left.
    assert {name: case["output"]["tests_passed"] for name, case in cases.items()} == {
        "add": True, "greet": True, "halve": False
    }  # fmt: skip
    tests = {name: case["verdicts"]["tests"] for name, case in cases.items()}
    assert {name: verdict["value"] for name, verdict in tests.items()} == {
        "add": 1.0, "greet": 1.0, "halve": 0.0
    }  # fmt: skip
    assert "`python -m unittest -q` exited with status 1" in tests["halve"]["feedback"]
    assert "AssertionError: 3.6666666666666665 != 4" in tests["halve"]["feedback"]
    # The folder beside the dataset was read into the case's input, and left as it was.
    assert cases["greet"]["input"]["files"] == {"greet.py": GREET, "test_greet.py": TEST_GREET}
    assert (tasks_folder / "data" / "tasks" / "greet" / "greet.py").read_text() == GREET
    assert "tests" in shown


def test_a_file_path_leaving_the_workspace_loses_only_its_case_naming_file_and_line(
    tasks_folder: Path,
) -> None:
    dataset = tasks_folder / "data" / "tasks.jsonl"
    with dataset.open("a", encoding="utf-8") as handle:
        handle.write(json.dumps(ESCAPE) + "\n")
    cases, _ = run(tasks_folder, "escape.json")
    error = cases["escape"]["error"]
    assert error["type"] == "WorkspaceError"
    assert (
        f"{dataset}:4: row 'escape': input.files: the path '../evil.py' leaves"
        in (error["message"])
    )
    assert "without '..'" in error["message"]
    assert cases["escape"]["verdicts"]["tests"]["value"] is None
    assert {name: cases[name]["verdicts"]["tests"]["value"] for name in ("add", "greet")} == {
        "add": 1.0, "greet": 1.0
    }  # fmt: skip
    assert not (tasks_folder / "data" / "evil.py").exists()
    assert not (tasks_folder / "evil.py").exists()
