"""Journeys: oloproof used the way its README shows, from a folder outside the repository.

Each test writes a user's files there (the README's own code where it shows some) and
runs them with the interpreter the README's install made, in a fresh process whose
environment carries nothing of the test run's: no PYTHONPATH into the source tree, no
test settings, no store but the project's own.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[2]
EXAMPLE_DATA = REPO / "examples" / "support_bot" / "data" / "example.jsonl"


def readme_block(after_heading: str, index: int = 0, language: str = "python") -> str:
    """The `index`th code block of `language` under the README heading `after_heading`."""
    text = (REPO / "README.md").read_text(encoding="utf-8")
    section = text.split(f"\n## {after_heading}\n", 1)[1].split("\n## ", 1)[0]
    blocks = re.findall(rf"```{language}\n(.*?)```", section, flags=re.S)
    return blocks[index]


def user_env(**extra: str) -> dict[str, str]:
    """The environment a user's shell would have: the machine's, without the test run's."""
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(("OLOPROOF_", "DJANGO_", "DATABASE_URL", "CELERY_", "PYTEST_"))
        and key not in ("PYTHONPATH", "COV_CORE_SOURCE", "COV_CORE_CONFIG")
    }
    env.update(extra)
    return env


def run_user(
    args: list[str], cwd: Path, timeout: float = 180, **extra: str
) -> subprocess.CompletedProcess[str]:
    """A command as the user runs it: the install's own `python` or `oloproof`."""
    program = args[0]
    if program in ("python", "oloproof"):
        bin_dir = Path(sys.executable).parent
        args = [str(bin_dir / program), *args[1:]]
    return subprocess.run(
        args,
        cwd=cwd,
        env=user_env(**extra),
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


def notebook_printed(cells: list[str], folder: Path, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """`cells` run in order in a notebook under a real Python kernel, started in `folder`
    with the user's environment only: what each cell printed."""
    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    pytest.importorskip("ipykernel")
    for key in list(os.environ):
        monkeypatch.delenv(key)
    for key, value in user_env().items():
        monkeypatch.setenv(key, value)
    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in cells])
    nbclient.NotebookClient(
        notebook, timeout=180, kernel_name="python3", resources={"metadata": {"path": folder}}
    ).execute()
    return ["".join(output.get("text", "") for output in cell.outputs) for cell in notebook.cells]


@pytest.fixture
def user_folder(tmp_path: Path) -> Path:
    """An empty folder of the user's, outside the repository, with the README's data."""
    folder = tmp_path / "my-evals"
    (folder / "data").mkdir(parents=True)
    (folder / "data" / "example.jsonl").write_bytes(EXAMPLE_DATA.read_bytes())
    assert REPO not in folder.parents
    return folder


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    """Headless Chromium, one per test file that drives the dashboard."""
    from playwright.sync_api import sync_playwright

    from tests.browser.conftest import CHROMIUM, CHROMIUM_ARGS

    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield launched
        launched.close()


def optimize_in_folder(folder: Path, store_report: str, **extra: str) -> tuple[Any, Any]:
    """`oloproof optimize optimize.yaml --json outcome.json` in the user's folder, then
    `store_report` (a Python script printing JSON last) run there: the outcome and the
    report's JSON."""
    done = run_user(
        ["oloproof", "optimize", "optimize.yaml", "--json", "outcome.json"],
        folder,
        timeout=600,
        **extra,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    outcome = json.loads((folder / "outcome.json").read_text(encoding="utf-8"))
    read = run_user(["python", "-c", store_report], folder)
    assert read.returncode == 0, read.stderr
    return outcome, json.loads(read.stdout.strip().splitlines()[-1])
