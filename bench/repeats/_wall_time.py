"""What repeats cost in wall time: one `oloproof run --repeats k` against k separate runs.

A folder of the user's (outside the repository, fresh for every measurement): a system
that waits 20 ms per call, as a model call would, over 100 cases at concurrency 8,
judged by `ExactMatch`, recorded in the folder's own store as `oloproof run` does by
default. Each measurement is whole processes, timed from start to exit: (a) one
`oloproof run oloproof.yaml --repeats k`; (b) `oloproof run oloproof.yaml` k times,
one after the other, in the same folder. Both make k × 100 calls of the system. The
median of `rounds` measurements is kept.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

CASES = 100
SYSTEM = """
import time


def answer(question):
    time.sleep(0.02)  # stands in for a model's reply
    return {"label": "a" if question["q"] % 3 else "b"}
"""
CONFIG = """system: bot.py:answer
dataset: data.jsonl
evaluators:
  - ExactMatch: {criterion: right, field: label}
concurrency: 8
"""


def _folder(root: Path) -> Path:
    root.mkdir()
    (root / "bot.py").write_text(SYSTEM, encoding="utf-8")
    (root / "oloproof.yaml").write_text(CONFIG, encoding="utf-8")
    rows = (
        json.dumps({"id": f"q{i}", "input": {"q": i}, "expected": {"label": "a"}})
        for i in range(CASES)
    )
    (root / "data.jsonl").write_text("\n".join(rows) + "\n", encoding="utf-8")
    return root


def _user_env() -> dict[str, str]:
    return {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(("OLOPROOF_", "DJANGO_", "DATABASE_URL", "CELERY_", "PYTEST_"))
        and key != "PYTHONPATH"
    }


def _timed(commands: list[list[str]], folder: Path) -> float:
    started = time.perf_counter()
    for command in commands:
        ran = subprocess.run(
            command, cwd=folder, env=_user_env(), capture_output=True, text=True, check=False
        )
        if ran.returncode != 0:
            raise RuntimeError(f"{' '.join(command)} exited {ran.returncode}: {ran.stderr[-2000:]}")
    return time.perf_counter() - started


def measure(ks: list[int], rounds: int) -> list[dict[str, Any]]:
    oloproof = str(Path(sys.executable).parent / "oloproof")
    rows = []
    with tempfile.TemporaryDirectory(prefix="oloproof-repeats-") as scratch:
        for k in ks:
            together, apart = [], []
            for round_ in range(rounds):
                folder = _folder(Path(scratch) / f"k{k}-together-{round_}")
                together.append(
                    _timed([[oloproof, "run", "oloproof.yaml", "--repeats", str(k)]], folder)
                )
                folder = _folder(Path(scratch) / f"k{k}-apart-{round_}")
                apart.append(_timed([[oloproof, "run", "oloproof.yaml"]] * k, folder))
            rows.append(
                {
                    "k": k,
                    "system_calls": k * CASES,
                    "one_run_with_repeats_s": round(statistics.median(together), 2),
                    "k_separate_runs_s": round(statistics.median(apart), 2),
                    "ratio": round(statistics.median(together) / statistics.median(apart), 3),
                    "all_together_s": [round(t, 2) for t in together],
                    "all_apart_s": [round(t, 2) for t in apart],
                }
            )
    return rows
