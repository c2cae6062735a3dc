"""`evaluate()` in Jupyter: a real ipykernel, driven through nbclient, records the run."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.faces.conftest import REPO, write_project

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")
pytest.importorskip("ipykernel")

CELLS = [
    "import asyncio, oloproof\n"
    "from oloproof import evaluate, system\n"
    "from oloproof.evaluators import ExactMatch\n"
    "asyncio.get_running_loop()  # the kernel runs cells inside an event loop",
    "from bot import answer\n"
    "result = evaluate(answer, 'data/cases.jsonl',\n"
    "                  [ExactMatch(criterion='exact_label', field='label')],\n"
    "                  policy='release.yaml')\n"
    "print(result.run_id)",
    "@system(name='async-bot', version='1')\n"
    "async def async_answer(case):\n"
    "    await asyncio.sleep(0)\n"
    "    raise RuntimeError('backend down')\n"
    "broken = evaluate(async_answer, 'data/cases.jsonl',\n"
    "                  [ExactMatch(criterion='exact_label', field='label')])\n"
    "print(broken.run_id, broken.metrics[0].n_missing)",
    "result",
    "broken",
    "print(oloproof.load(1).metrics[0].n_observed)",
]


def test_evaluate_records_from_a_running_kernel_and_renders_the_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    project = tmp_path / "nb"
    write_project(project)
    (project / "release.yaml").write_text(
        "version: 1\nrules:\n  - metric: exact_label\n    min: 0.5\n", encoding="utf-8"
    )
    for key in list(os.environ):
        if key.startswith(("OLOPROOF_", "DJANGO_", "DATABASE_URL", "PYTEST_")):
            monkeypatch.delenv(key)
    monkeypatch.setenv("OLOPROOF_RECORD", "1")
    monkeypatch.setenv("PYTHONPATH", f"{REPO}{os.pathsep}{project}")
    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in CELLS])
    client = nbclient.NotebookClient(
        notebook, timeout=120, kernel_name="python3", resources={"metadata": {"path": project}}
    )
    client.execute()

    def text(index: int) -> str:
        return "".join(output.get("text", "") for output in notebook.cells[index].outputs)

    def html(index: int) -> str:
        return "".join(
            output.get("data", {}).get("text/html", "") for output in notebook.cells[index].outputs
        )

    assert text(1).strip() == "1"
    assert text(2).strip() == "2 12"
    page = html(3)
    for expected in (
        "bot@1",
        "cases.jsonl",
        "12 cases",
        "gate PASS",
        "exact_label ≥ 0.5",
        'href="http://127.0.0.1:8000/runs/1/"',
    ):
        assert expected in page, (expected, page)
    broken = html(4)
    assert "12 missing" in broken
    assert "system RuntimeError × 12" in broken
    assert "none (no policy)" in broken
    assert text(5).strip() == "12"
    assert (project / ".oloproof" / "oloproof.sqlite3").is_file()
