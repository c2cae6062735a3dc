"""Workload (e) of bench.isolation: the time to start one sandboxed process for a
function defined in a script, in a notebook cell (simulated, and in a real kernel) and
in an importable module (the floor). See bench/README.md, "Isolation"."""

from __future__ import annotations

import json
import math
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any


def p90(values: list[float]) -> float:
    """The nearest-rank 90th percentile."""
    ordered = sorted(values)
    return ordered[max(0, math.ceil(0.9 * len(ordered)) - 1)]


HARNESS = """\
import json
import sys
import time

from oloproof_core.execution.isolation import DEFAULT_MEMORY_LIMIT_MB, MeteredPool


def timed_starts(answer, times):
    found, execution = [], {}
    for _ in range(times):
        pool = MeteredPool(
            answer, processes=1, memory_limit_mb=DEFAULT_MEMORY_LIMIT_MB, sandbox="required"
        )
        try:
            began = time.perf_counter()
            pool.start(1)
            found.append((time.perf_counter() - began) * 1000)
            execution = pool.describe()
        finally:
            pool.close()
    return {
        "ms": found,
        "start": execution["start"],
        "sandbox_on": execution["sandbox"]["on"],
        "processes": execution["processes"],
    }
"""

SYSTEM_SOURCE = """\
from oloproof import system


@system(name="bench-start", version="1")
def answer(case):
    return {"label": "refund" if "refund" in case["question"] else "other"}
"""

REPORT = 'print("START " + json.dumps(timed_starts(answer, int(sys.argv[1]))))\n'

START_KINDS = {
    # kind: (how its system travels, the file `python` runs, or None for the kernel)
    "script": ("value", "script.py"),
    "cell": ("value", "cell.py"),
    "kernel": ("value", None),
    "reference": ("reference", "floor.py"),
}


def start_folder() -> Path:
    """A user's folder with a script of each kind, outside the repository, open to
    others to read as a folder made with the usual umask is (`mkdtemp` makes it 0700,
    which the sandbox meets with a user namespace of its own instead)."""
    folder = Path(tempfile.mkdtemp(prefix="oloproof-bench-start-"))
    folder.chmod(0o755)
    main = 'if __name__ == "__main__":\n    ' + REPORT
    files = {
        # The system at the top of the script: a function of its `__main__`.
        "script.py": HARNESS + "\n" + SYSTEM_SOURCE + "\n\n" + main,
        # The system as a notebook cell defines it: its source compiled and executed in
        # `__main__`'s namespace, as IPython runs a cell.
        "cell.py": HARNESS
        + "\nimport __main__\n\n"
        + f"CELL = {SYSTEM_SOURCE!r}\n"
        + 'exec(compile(CELL, "<ipython-input-1>", "exec"), __main__.__dict__)\n\n'
        + main,
        # The floor: the system in a module of its own, imported by name.
        "floor_bot.py": SYSTEM_SOURCE,
        "floor.py": HARNESS + "\nfrom floor_bot import answer  # noqa: E402\n\n\n" + main,
    }
    for name, text in files.items():
        (folder / name).write_text(text, encoding="utf-8")
    return folder


def kernel_available() -> bool:
    try:
        import ipykernel  # noqa: F401
        import nbclient  # noqa: F401
        import nbformat  # noqa: F401
    except ImportError:
        return False
    return True


def started_in(kind: str, folder: Path, times: int) -> dict:
    """One fresh process of `kind` timing `times` pools; what it printed."""
    script = START_KINDS[kind][1]
    if script is None:
        import nbclient
        import nbformat

        cells = [HARNESS, SYSTEM_SOURCE, REPORT.replace("int(sys.argv[1])", str(times))]
        notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in cells])
        nbclient.NotebookClient(
            notebook, timeout=300, kernel_name="python3", resources={"metadata": {"path": folder}}
        ).execute()
        printed = "".join(output.get("text", "") for output in notebook.cells[-1].outputs)
    else:
        env = {key: value for key, value in os.environ.items() if key != "PYTHONPATH"}
        done = subprocess.run(
            [sys.executable, script, str(times)],
            cwd=folder,
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )
        assert done.returncode == 0, done.stderr
        printed = done.stdout
    lines = [line for line in printed.splitlines() if line.startswith("START ")]
    assert lines, printed
    return json.loads(lines[-1].removeprefix("START "))


def workload_e(rounds: int, again: int, kernel: bool) -> dict:
    """One sandboxed process's start for a system of a script, of a notebook cell and of
    an importable module: one fresh process of each kind per round, interleaved."""
    kinds = [kind for kind in START_KINDS if kernel or START_KINDS[kind][1] is not None]
    folder = start_folder()
    first: dict[str, list[float]] = {kind: [] for kind in kinds}
    later: dict[str, list[float]] = {kind: [] for kind in kinds}
    try:
        for round_ in range(rounds):
            shift = round_ % len(kinds)
            for kind in kinds[shift:] + kinds[:shift]:
                found = started_in(kind, folder, 1 + again)
                assert found["start"] == START_KINDS[kind][0], (kind, found)
                assert found["sandbox_on"] is True, (kind, found)
                assert found["processes"] == 1, (kind, found)
                first[kind].append(found["ms"][0])
                later[kind].extend(found["ms"][1:])
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    figures: dict[str, Any] = {
        "rounds": rounds,
        "again": again,
        "kernel": "ipykernel through nbclient" if kernel else "not installed: not measured",
    }
    for kind in kinds:
        figures[kind] = {
            "start": START_KINDS[kind][0],
            "first_ms": summary(first[kind]),
            "again_ms": summary(later[kind]),
        }
    for kind in kinds:
        if kind != "reference":
            differences = [a - b for a, b in zip(first[kind], first["reference"], strict=True)]
            figures[kind]["first_minus_reference_ms"] = {
                "median": round(
                    statistics.median(first[kind]) - statistics.median(first["reference"]), 1
                ),
                "median_of_rounds": round(statistics.median(differences), 1),
            }
            figures[kind]["again_minus_reference_ms"] = round(
                statistics.median(later[kind]) - statistics.median(later["reference"]), 1
            )
    return figures


def summary(values: list[float]) -> dict:
    return {
        "n": len(values),
        "median": round(statistics.median(values), 1),
        "p90": round(p90(values), 1),
        "min": round(min(values), 1),
    }
