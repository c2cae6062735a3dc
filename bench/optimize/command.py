"""`oloproof optimize` timed as a user runs it, for `bench.optimize --whole-process`.

The command records into a store of its own; the figure is the time from its launch to
its progress line of the first candidate at the target, interpreter, imports, the
config's reading in its sandbox and the store's opening included.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from tests.support.optimize_task import write_project

_CANDIDATE_LINE = re.compile(r"^candidate \d+ .*: val (\d\.\d+)")


def through_command(folder: Path, budget: int, target: float) -> dict[str, Any]:
    """Seconds from `oloproof optimize`'s launch to its first candidate at `target`."""
    config = write_project(
        folder, budget={"metric_calls": budget}, engine="gepa", extra={"concurrency": 1}
    )
    env = {**os.environ, "OLOPROOF_RECORD": "1", "OLOPROOF_DATA_DIR": str(folder / "data")}
    launched = time.perf_counter()
    process = subprocess.Popen(
        [sys.executable, "-m", "oloproof", "optimize", str(config)],
        cwd=folder,
        env=env,
        stderr=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        text=True,
    )
    reached = None
    assert process.stderr is not None
    for line in process.stderr:
        found = _CANDIDATE_LINE.match(line)
        if reached is None and found and float(found.group(1)) >= target:
            reached = time.perf_counter() - launched
    status = process.wait()
    whole = time.perf_counter() - launched
    return {"since_launch": reached, "whole_seconds": whole, "exit": status}
