"""`oloproof label` and the library's `label`, `labels` and `calibration` in fresh processes
on a user's project store (every form and mistake in this process:
tests/runs/library/test_labels_cli.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.faces.conftest import clean_env, oloproof, python, write_project

pytestmark = pytest.mark.slow

BOT = """
from oloproof import system


@system(name="bot", version="1")
def answer(case):
    if case["q"].endswith("#5"):
        raise RuntimeError("backend down on case 5")
    return {"label": "refund" if "refund" in case["q"] else "other"}
"""


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, str]]:
    """One recorded run of twelve cases (c00 … c11; c05 failed), shared by this module."""
    project = tmp_path_factory.mktemp("label") / "my-evals"
    write_project(project)
    (project / "bot.py").write_text(BOT, encoding="utf-8")
    env = clean_env(OLOPROOF_DATA_DIR=str(project / ".store"))
    done = oloproof("run", "oloproof.yaml", cwd=project, env=env)
    assert "recorded run #1" in done.stderr, done.stderr
    return project, env


def test_the_command_and_the_library_label_a_users_run(recorded) -> None:
    project, env = recorded
    first = oloproof(
        "label", "1", "c03", "exact_label", "fail", "--note", "wrong", cwd=project, env=env
    )
    assert first.returncode == 0, first.stderr
    assert "c03  exact_label = 0  by " in first.stdout
    (project / "labels.csv").write_text(
        "case_id,value\nc01,pass\nc05,pass\nc99,pass\n", encoding="utf-8"
    )
    args = ("label", "import", "labels.csv", "--run", "1", "--metric", "exact_label")
    refused = oloproof(*args, cwd=project, env=env)
    assert refused.returncode == 3
    assert "labels.csv line 3: case 'c05' of run 1 failed (RuntimeError)" in refused.stderr
    assert "labels.csv line 4: run 1 has no case 'c99'" in refused.stderr
    assert "Traceback" not in refused.stderr
    (project / "labels.csv").write_text("case_id,value\nc01,pass\nc02,fail\n", encoding="utf-8")
    imported = oloproof(*args, cwd=project, env=env)
    assert "2 labels saved from labels.csv for run #1" in imported.stdout, imported.stderr
    shown = oloproof("label", "show", "1", "exact_label", cwd=project, env=env)
    # The labels count as soon as the queue's first draw lands on one (the seed is random).
    assert (
        "no labelled draws yet: the figure assumes the judge is right" in shown.stdout
        or " labelled draws" in shown.stdout
    ), shown.stdout
    assert "judge vs people on 3 cases: agreement" in shown.stdout
    out = python(
        """
        import json, oloproof
        oloproof.label(1, "c09", "exact_label", "pass", note="fine")
        listed = oloproof.labels(1, "exact_label")
        figures = oloproof.calibration(1, "exact_label")
        print(json.dumps([[case["case_id"] for case in listed], figures.calibration.n]))
        """,
        cwd=project,
        env=env,
    )
    assert json.loads(out) == [["c01", "c02", "c03", "c09"], 4]
