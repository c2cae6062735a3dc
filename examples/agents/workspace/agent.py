"""A stand-in agent for tasks with a workspace: it applies the edit each task describes
and runs the task's tests there (docs/agents.md, "Tasks with a workspace")."""

import pathlib
import subprocess
import sys

from oloproof import current_case


def solve(task):
    workspace = pathlib.Path(current_case().workspace)  # also the working directory
    edit = task["edit"]
    source = workspace / edit["file"]
    source.write_text(source.read_text().replace(edit["old"], edit["new"]))
    tests = subprocess.run(
        [sys.executable, "-m", "unittest", "-q"], capture_output=True, text=True, timeout=60
    )
    return {"edited": edit["file"], "tests_passed": tests.returncode == 0}
