"""A data folder that cannot hold the store (`OLOPROOF_DATA_DIR` naming a file) is a user's
mistake: `oloproof run`, `oloproof optimize` and a script calling `evaluate()` each say
so, naming the folder and how to fix it, with exit code 3 and no traceback."""

from __future__ import annotations

import shutil
from pathlib import Path

from tests.journeys.conftest import REPO, readme_block, run_user

CONFIG = (
    "system: bot.py:answer\ndataset: data/example.jsonl\n"
    "evaluators:\n  - ExactMatch: {criterion: exact_label, field: label}\n"
)


def said_plainly(done: object, folder: Path) -> None:
    out = f"{done.stdout}{done.stderr}"  # type: ignore[attr-defined]
    assert "Traceback" not in out, out
    assert f"the data folder {folder}" in out, out
    assert "a file, not a folder" in out, out
    assert "Point OLOPROOF_DATA_DIR at a folder" in out, out


def test_the_run_command_says_what_is_wrong_with_the_data_folder(user_folder: Path) -> None:
    system = readme_block("In 30 seconds").split("\n\nresult = evaluate(")[0]
    (user_folder / "bot.py").write_text(system + "\n", encoding="utf-8")
    (user_folder / "oloproof.yaml").write_text(CONFIG, encoding="utf-8")
    not_a_folder = user_folder / "store"
    not_a_folder.write_text("a file\n", encoding="utf-8")

    done = run_user(
        ["oloproof", "run", "oloproof.yaml"], user_folder, OLOPROOF_DATA_DIR=str(not_a_folder)
    )

    assert done.returncode == 3, done.stderr
    said_plainly(done, not_a_folder)


def test_a_script_gets_the_same_message_as_an_error(user_folder: Path) -> None:
    script = readme_block("In 30 seconds")
    (user_folder / "evals.py").write_text(script, encoding="utf-8")
    not_a_folder = user_folder / "store"
    not_a_folder.write_text("a file\n", encoding="utf-8")

    done = run_user(["python", "evals.py"], user_folder, OLOPROOF_DATA_DIR=str(not_a_folder))

    assert done.returncode != 0
    assert "OloproofError: the data folder" in done.stderr
    assert "a file, not a folder" in done.stderr


def test_the_optimize_command_says_it_before_any_model_call(tmp_path: Path) -> None:
    folder = tmp_path / "calc-opt"
    shutil.copytree(REPO / "examples" / "optimize_calc", folder)
    not_a_folder = folder / "store"
    not_a_folder.write_text("a file\n", encoding="utf-8")

    done = run_user(
        ["oloproof", "optimize", "optimize.yaml"],
        folder,
        OLOPROOF_DATA_DIR=str(not_a_folder),
        # Nothing answers here: reaching a model would fail differently.
        OLOPROOF_SYSTEM_MODEL="task-model",
        OLOPROOF_SYSTEM_BASE_URL="http://127.0.0.1:9/v1",
        OLOPROOF_REFLECTION_MODEL="reflect-model",
        OLOPROOF_REFLECTION_BASE_URL="http://127.0.0.1:9/v1",
    )

    assert done.returncode == 3, done.stderr
    said_plainly(done, not_a_folder)
