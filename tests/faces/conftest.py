"""The faces end to end: a user's project folder, and `oloproof` run in it as a user would.

Every command runs in a fresh process with recording on and no DATA_DIR set unless a
test sets one, so the store is found from the project as it is for users.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from collections.abc import Mapping
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]

BOT = """
from oloproof import system


@system(name="bot", version="{version}")
def answer(case):
    if {broken}:
        raise RuntimeError("backend down")
    return {{"label": "refund" if "refund" in case["q"] else "other"}}
"""


def clean_env(**extra: str) -> dict[str, str]:
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(("OLOPROOF_", "DJANGO_", "DATABASE_URL", "CELERY_", "PYTEST_"))
    }
    env.update(PYTHONPATH=str(REPO), OLOPROOF_RECORD="1", OLOPROOF_LOG_LEVEL="ERROR")
    env.update(extra)
    return env


def write_project(
    folder: Path, *, version: str = "1", broken: bool = False, n: int = 12, extra_yaml: str = ""
) -> Path:
    """A user's project: pyproject.toml, bot.py, data/cases.jsonl and oloproof.yaml."""
    (folder / "data").mkdir(parents=True, exist_ok=True)
    (folder / "pyproject.toml").write_text('[project]\nname = "my-evals"\n', encoding="utf-8")
    (folder / "bot.py").write_text(BOT.format(version=version, broken=broken), encoding="utf-8")
    with (folder / "data" / "cases.jsonl").open("w", encoding="utf-8") as handle:
        for i in range(n):
            label = "refund" if i % 2 else "other"
            row = {"id": f"c{i:02d}", "input": {"q": f"{label} #{i}"}, "expected": {"label": label}}
            handle.write(json.dumps(row) + "\n")
    config = folder / "oloproof.yaml"
    config.write_text(
        "system: bot:answer\ndataset: data/cases.jsonl\nevaluators:\n"
        "  - ExactMatch: {criterion: exact_label, field: label}\n" + extra_yaml,
        encoding="utf-8",
    )
    return config


def oloproof(
    *args: str, cwd: Path, env: Mapping[str, str] | None = None, stdin: str | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "oloproof", *args],
        cwd=cwd,
        env=dict(env) if env is not None else clean_env(),
        capture_output=True,
        text=True,
        timeout=180,
        input=stdin,
        check=False,
    )


def python(code: str, *, cwd: Path, env: Mapping[str, str] | None = None) -> str:
    done = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        cwd=cwd,
        env=dict(env) if env is not None else clean_env(),
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


@pytest.fixture
def project(tmp_path: Path) -> Path:
    folder = tmp_path / "my-evals"
    write_project(folder)
    return folder
