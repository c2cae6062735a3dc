"""A task's workspace, per case: what making it costs the system's process and the evaluator's.

    .venv/bin/python -m bench.agents.workspace [--cases 2000] [--files 3]

Times the engine's own steps in this process, as a system's process and an evaluator's
take them for each case of a task with files (`docs/agents.md`, "Tasks with a
workspace"): the system's side makes the folder, seeds it with `--files` small text
files, makes it the working directory, then packs it and removes it; the evaluator's side
checks the packed workspace and unpacks it into a copy of its own, then removes it.
Median and 95th percentile over `--cases`; a run's whole `oloproof run` of tasks with a
workspace is in bench/README.md beside these.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from pathlib import Path

from oloproof_core.cases.workspace import CaseWorkspace
from oloproof_core.cases.workspace_pack import WorkspaceCopy, checked_workspace

RESULTS = Path(__file__).resolve().parents[1] / "results"


def task_input(files: int) -> dict[str, object]:
    module = "def add(a, b):\n    return a - b\n" * 4
    test = "import unittest\n\nfrom calc import add\n\n\nclass T(unittest.TestCase):\n    pass\n"
    made = {"calc.py": module, "test_calc.py": test}
    made.update({f"notes/note{n}.txt": "a line of notes\n" * 20 for n in range(files - 2)})
    return {"edit": "calc.py", "files": made}


def system_side(case_input: dict[str, object]) -> tuple[float, dict[str, object]]:
    started = time.perf_counter()
    workspace = CaseWorkspace.open(case_input)
    assert workspace is not None
    workspace.enter()
    packed = workspace.finish()
    return (time.perf_counter() - started) * 1000, packed


def evaluator_side(packed: dict[str, object]) -> float:
    started = time.perf_counter()
    checked = checked_workspace(packed)
    assert checked is not None
    copy = WorkspaceCopy(checked)
    copy.remove()
    return (time.perf_counter() - started) * 1000


def p95(values: list[float]) -> float:
    return sorted(values)[int(0.95 * (len(values) - 1))]


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.agents.workspace")
    parser.add_argument("--cases", type=int, default=2000)
    parser.add_argument("--files", type=int, default=3)
    args = parser.parse_args()
    case_input = task_input(max(2, args.files))
    system_ms, evaluator_ms = [], []
    for _ in range(args.cases):
        took, packed = system_side(case_input)
        system_ms.append(took)
        evaluator_ms.append(evaluator_side(packed))
    report = {
        "cases": args.cases,
        "files": max(2, args.files),
        "system_side_ms": {"median": statistics.median(system_ms), "p95": p95(system_ms)},
        "evaluator_side_ms": {"median": statistics.median(evaluator_ms), "p95": p95(evaluator_ms)},
    }
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "agents_workspace.json").write_text(json.dumps(report, indent=2) + "\n")
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
