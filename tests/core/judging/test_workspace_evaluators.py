"""Tasks with a workspace, through the engine with real sandboxed processes: the system
edits its workspace and runs commands there, evaluators judge a copy of what it left,
and no case reaches outside its own workspace.

Every run here starts real system and evaluator processes in the sandbox (the tests
ask for one: `sandbox="required"`); no test asserts how long anything took.
"""

from __future__ import annotations

import glob
import os
import socket
import subprocess
import sys
import tempfile

import oloproof_core
from oloproof import current_case, evaluate, system
from oloproof.evaluators import WorkspaceCommand, evaluator
from oloproof_core import InMemoryStore

BUGGY = "def add(a, b):\n    return a - b\n"
TEST = "from calc import add\n\nassert add(2, 3) == 5, add(2, 3)\nprint('tests pass')\n"


def task(case_id: str, fix: bool) -> dict:
    return {
        "id": case_id,
        "input": {"fix": fix, "files": {"calc.py": BUGGY, "test_calc.py": TEST}},
    }


@system(name="fixer", version="1")
def fixer(case):
    """Fixes the bug when asked to, then runs the tests in its workspace."""
    if case["fix"]:
        with open("calc.py", "w") as handle:  # the working directory is the workspace
            handle.write(BUGGY.replace("a - b", "a + b"))
    done = subprocess.run(
        [sys.executable, "test_calc.py"], capture_output=True, text=True, check=False
    )
    return {"workspace": current_case().workspace, "tests": done.returncode}


@evaluator(criterion="fixed_file", reads=("workspace",))
def fixed_file(case):
    with open(os.path.join(case.workspace, "calc.py")) as handle:
        return "a + b" in handle.read()


TESTS = WorkspaceCommand(criterion="tests", command=["python", "test_calc.py"], timeout_s=30)


def test_the_agent_edits_its_workspace_and_the_evaluators_judge_what_it_left():
    store = InMemoryStore()
    rows = [task("fixed", True), task("left", False), task("also-fixed", True)]
    result = evaluate(fixer, rows, evaluators=[TESTS, fixed_file], store=store, sandbox="required")
    cases = {case.id: case for case in result.cases}
    assert all(case.error is None for case in cases.values()), [c.error for c in cases.values()]
    # The system's own test run, inside its sandbox, saw its own edit.
    assert {name: case.output["tests"] for name, case in cases.items()} == {
        "fixed": 0, "left": 1, "also-fixed": 0
    }  # fmt: skip
    assert all(case.output["workspace"].startswith("/tmp/") for case in cases.values())
    assert len({case.output["workspace"] for case in cases.values()}) == 3
    tests = {name: case.verdicts["tests"] for name, case in cases.items()}
    assert {name: verdict.value for name, verdict in tests.items()} == {
        "fixed": 1.0, "left": 0.0, "also-fixed": 1.0
    }  # fmt: skip
    assert "exited with status 1" in tests["left"].feedback
    assert "AssertionError: -1" in tests["left"].feedback
    assert {name: case.verdicts["fixed_file"].value for name, case in cases.items()} == {
        "fixed": 1.0, "left": 0.0, "also-fixed": 1.0
    }  # fmt: skip
    # The same files left the same way are judged once: the second run's verdicts are cached.
    again = evaluate(fixer, rows, evaluators=[TESTS, fixed_file], store=store, sandbox="required")
    assert all(v.cached for case in again.cases for v in case.verdicts.values())


_SEEN: list[str] = []
"""The workspaces this process has held, kept by the system as a hostile one would."""


@system(name="prowler", version="1")
def prowler(case):
    """Tries to write outside its workspace and to read the workspaces of other cases."""
    own = current_case().workspace
    tried = {}
    for name, target in {
        "engine": os.path.join(os.path.dirname(oloproof_core.__file__), "planted.txt"),
        "dataset folder": os.path.join(case["dataset_folder"], "planted.txt"),
    }.items():
        try:
            with open(target, "w") as handle:
                handle.write("planted")
            tried[name] = "written"
        except OSError as exc:
            tried[name] = type(exc).__name__
    earlier = [path for path in _SEEN if os.path.exists(path)]
    _SEEN.append(own)
    pattern = os.path.join(tempfile.gettempdir(), "oloproof-workspace-*")
    return {"tried": tried, "earlier": earlier, "visible": sorted(glob.glob(pattern)), "own": own}


@evaluator(criterion="only_seeded", reads=("workspace",))
def only_seeded(case):
    return case.workspace.files == ("a.txt",)


def test_a_case_writes_nothing_outside_its_sandbox_and_sees_no_other_workspace(tmp_path):
    rows = [
        {"id": f"p{i}", "input": {"dataset_folder": str(tmp_path), "files": {"a.txt": str(i)}}}
        for i in range(4)
    ]
    result = evaluate(prowler, rows, evaluators=[only_seeded], concurrency=1, sandbox="required")
    outputs = [case.output for case in result.cases]
    assert all(case.error is None for case in result.cases)
    for output in outputs:
        assert set(output["tried"].values()) <= {"PermissionError", "OSError", "FileNotFoundError"}
        assert output["earlier"] == []
        assert output["visible"] == [output["own"]]
    # One process ran them all in turn (concurrency 1), each in a workspace of its own.
    assert len({output["own"] for output in outputs}) == 4
    assert not os.path.exists(os.path.join(os.path.dirname(oloproof_core.__file__), "planted.txt"))
    assert not (tmp_path / "planted.txt").exists()
    assert all(case.verdicts["only_seeded"].value == 1.0 for case in result.cases)


@system(name="no-files", version="1")
def no_files(case):
    return current_case().workspace


def test_a_case_without_files_has_no_workspace_and_a_workspace_evaluator_says_so():
    result = evaluate(
        no_files, [{"id": "plain", "input": {"q": 1}}], evaluators=[TESTS], sandbox="required"
    )
    (case,) = result.cases
    assert case.output is None
    verdict = case.verdicts["tests"]
    assert verdict.value is None
    assert "has no workspace" in (verdict.error or "")


@system(name="async-fixer", version="1")
async def async_fixer(case):
    """An async agent: its workspace is its working directory as a sync one's is."""
    with open("calc.py", "w") as handle:
        handle.write(BUGGY.replace("a - b", "a + b"))
    return os.getcwd() == current_case().workspace


def test_an_async_system_gets_its_workspace_as_its_working_directory_too():
    result = evaluate(async_fixer, [task("fixed", True)], evaluators=[TESTS], sandbox="required")
    (case,) = result.cases
    assert case.output is True
    assert case.verdicts["tests"].value == 1.0


COMMANDS = """\
import socket, sys
try:
    socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=5).close()
    print("reached")
except OSError:
    print("no network")
try:
    with open("big.bin", "wb") as handle:
        handle.write(b"x" * (16 * 2**20))
        handle.flush()
    print("wrote 16 MiB")
except OSError as exc:
    print("full", exc.errno)
"""


@system(name="commander", version="1")
def commander(case):
    """Runs a command in its workspace: a network call, then a write past the /tmp cap."""
    done = subprocess.run(
        [sys.executable, "probe.py", str(case["port"])],
        capture_output=True,
        text=True,
        check=False,
    )
    return done.stdout.split("\n")[:2]


def test_commands_the_agent_runs_are_held_by_its_sandbox(monkeypatch):
    monkeypatch.setenv("OLOPROOF_SANDBOX_TMP_MB", "8")
    with socket.create_server(("127.0.0.1", 0)) as listening:
        port = listening.getsockname()[1]
        rows = [{"id": "probe", "input": {"port": port, "files": {"probe.py": COMMANDS}}}]
        result = evaluate(commander, rows, evaluators=[TESTS_ANYWAY], sandbox="required")
    (case,) = result.cases
    # This machine listens on the port; inside the sandbox nothing but the gateway does.
    assert case.output == ["no network", "full 28"]
    # A command given as one string is split as a shell would, and ran in the copy.
    assert case.verdicts["probe_runs"].value == 1.0


TESTS_ANYWAY = WorkspaceCommand(criterion="probe_runs", command="python probe.py 1")


def test_with_isolation_thread_a_case_with_files_is_missing_saying_why():
    result = evaluate(
        fixer, [task("fixed", True)], evaluators=[TESTS], isolation="thread", sandbox="off"
    )
    (case,) = result.cases
    assert case.error is not None
    assert case.error.type == "WorkspaceError"
    assert "isolation: thread" in case.error.message
