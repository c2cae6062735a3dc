"""`oloproof run oloproof.yaml`: the code a run config names runs only in its sandbox.

A config's system module, its `module:name` evaluator and its metric file each carry
top-level code. Loading the config must not run that code in oloproof's own process (as
the user running the command, with their secrets, able to write beside the code): it
runs in a sandboxed probe that reads the declarations, then in the system's and the
evaluators' own sandboxed processes. Each module reports, from every process that
imports it, what it could see and do there.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest

from tests.journeys.conftest import run_user

WITNESS = """
import json, os, sys

def _witness(who):
    here = os.path.dirname(os.path.abspath(__file__))
    try:
        with open(os.path.join(here, "written-at-import-" + who), "w") as handle:
            handle.write("top-level code could write beside the code")
        wrote = True
    except OSError:
        wrote = False
    try:
        with open(os.path.join(here, "data", "example.jsonl"), encoding="utf-8") as handle:
            answers = "expected" in handle.read()
    except OSError:
        answers = False
    print("WITNESS " + json.dumps({
        "who": who,
        "uid": os.getuid(),
        "secret": os.environ.get("SECRET_KEY"),
        "db_password": os.environ.get("PGPASSWORD"),
        "wrote": wrote,
        "answers": answers,
    }), file=sys.stderr, flush=True)
"""

SYSTEM = (
    WITNESS
    + """
_witness("system")

from oloproof import system


@system(name="witnessed-bot", version="1")
def answer(case):
    return {"label": "refund" if "refund" in case["question"].lower() else "other"}
"""
)

CHECKS = (
    WITNESS
    + """
_witness("evaluator")

from oloproof.evaluators import evaluator


@evaluator(criterion="known_label", reads=("output",))
def known_label(case):
    return case.output["label"] in {"refund", "other"}
"""
)

METRIC = (
    WITNESS
    + """
_witness("metric")


def score(input, output, expected=None):
    right = output["label"] == expected["label"]
    return (1.0 if right else 0.0), {"feedback": "right" if right else "wrong label"}
"""
)

CONFIG = """\
system: bot:answer
dataset: data/example.jsonl
evaluators:
  - ExactMatch: {criterion: exact_label, field: label}
  - checks:known_label
  - label_metric.py
"""


def _write_project(folder: Path) -> None:
    (folder / "bot.py").write_text(SYSTEM, encoding="utf-8")
    (folder / "checks.py").write_text(CHECKS, encoding="utf-8")
    (folder / "label_metric.py").write_text(METRIC, encoding="utf-8")
    (folder / "oloproof.yaml").write_text(CONFIG, encoding="utf-8")


def _witnesses(stderr: str) -> list[dict[str, object]]:
    # Processes write to the one stream at once: a report may share its line with another's.
    return [json.loads(found) for found in re.findall(r"WITNESS (\{[^{}]*\})", stderr)]


def test_a_configs_code_runs_its_top_level_only_in_sandboxes(user_folder: Path) -> None:
    _write_project(user_folder)

    done = run_user(
        ["oloproof", "run", "oloproof.yaml"],
        user_folder,
        SECRET_KEY="the-server-secret",
        PGPASSWORD="the-database-password",
    )

    assert done.returncode == 0, done.stdout + done.stderr
    assert "known_label" in done.stdout
    assert "label_metric" in done.stdout
    seen = _witnesses(done.stderr)
    # Each module is imported by the probe and by its own processes, never elsewhere.
    assert {item["who"] for item in seen} == {"system", "evaluator", "metric"}
    for item in seen:
        assert item["secret"] is None, item
        assert item["db_password"] is None, item
        assert item["wrote"] is False, item
        assert item["answers"] is False, item
        if os.geteuid() == 0:
            assert item["uid"] != 0, item
    assert not list(user_folder.glob("written-at-import-*"))


def test_a_config_module_that_exits_at_import_fails_the_run_in_its_words(
    user_folder: Path,
) -> None:
    (user_folder / "bot.py").write_text("import sys\nsys.exit(4)\n", encoding="utf-8")
    (user_folder / "oloproof.yaml").write_text(
        "system: bot:answer\ndataset: data/example.jsonl\nevaluators:\n"
        "  - ExactMatch: {criterion: exact_label, field: label}\n",
        encoding="utf-8",
    )

    done = run_user(["oloproof", "run", "oloproof.yaml"], user_folder)

    assert done.returncode == 3, done.stdout + done.stderr
    assert "oloproof.yaml:1" in done.stderr
    assert "bot.py:2" in done.stderr
    assert "sys.exit(4)" in done.stderr
    assert "Traceback (most recent call last)" not in done.stderr


@pytest.mark.skipif(os.geteuid() != 0, reason="the floor is about a root worker's secrets")
def test_under_the_floor_a_config_asking_thread_runs_none_of_its_code(user_folder: Path) -> None:
    _write_project(user_folder)
    config = user_folder / "oloproof.yaml"
    config.write_text(CONFIG + "isolation: thread\n", encoding="utf-8")

    done = run_user(["oloproof", "run", "oloproof.yaml"], user_folder, OLOPROOF_SANDBOX="required")

    assert done.returncode == 3, done.stdout + done.stderr
    assert "OLOPROOF_SANDBOX=required" in done.stderr
    assert _witnesses(done.stderr) == []


def test_a_system_beside_the_configs_folder_is_found_and_a_refused_declaration_names_its_line(
    user_folder: Path,
) -> None:
    (user_folder / "bot.py").write_text(SYSTEM, encoding="utf-8")
    configs = user_folder / "configs"
    configs.mkdir()
    (configs / "checks.py").write_text(
        "from oloproof.evaluators import evaluator\n\n\n"
        f"@evaluator(criterion={'x' * 300!r}, reads=('output',))\n"
        "def known(case):\n    return True\n",
        encoding="utf-8",
    )
    (configs / "oloproof.yaml").write_text(
        "system: ../bot.py:answer\ndataset: ../data/example.jsonl\nevaluators:\n"
        "  - ExactMatch: {criterion: exact_label, field: label}\n",
        encoding="utf-8",
    )

    done = run_user(["oloproof", "run", "configs/oloproof.yaml"], user_folder)

    assert done.returncode == 0, done.stdout + done.stderr
    assert "exact_label" in done.stdout

    (configs / "oloproof.yaml").write_text(
        "system: ../bot.py:answer\ndataset: ../data/example.jsonl\nevaluators:\n  - checks:known\n",
        encoding="utf-8",
    )
    done = run_user(["oloproof", "run", "configs/oloproof.yaml"], user_folder)

    assert done.returncode == 3, done.stdout + done.stderr
    assert f"{configs / 'checks.py'}:4: DeclarationError" in done.stderr
    assert "at most 200" in done.stderr
