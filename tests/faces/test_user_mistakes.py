"""A user's mistakes end in a message that says what to fix, an exit code, and no traceback."""

from __future__ import annotations

import socket
from pathlib import Path

from tests.faces.conftest import clean_env, oloproof, write_project

BAD_METRIC = """
def score(input, output, expected=None):
    return 1.0  # no feedback: breaks the metric contract on every case
"""


def test_a_metric_that_observes_nothing_exits_5_with_its_first_error(project: Path) -> None:
    (project / "bad_metric.py").write_text(BAD_METRIC, encoding="utf-8")
    write_project(project, extra_yaml="  - bad_metric.py\n")
    done = oloproof("run", "oloproof.yaml", cwd=project)
    assert done.returncode == 5, done.stderr
    assert "'bad_metric' observed no case (all 12 missing)" in done.stderr
    assert "first error, on case 'c00'" in done.stderr
    assert "ContractError" in done.stderr
    assert "first (case c00): ContractError" in done.stdout  # the table says it too
    assert "Traceback" not in done.stderr
    assert "recorded run #1" in done.stderr.splitlines()[-1]


def test_a_system_failing_every_case_exits_5_with_its_error(tmp_path: Path) -> None:
    project = tmp_path / "p"
    write_project(project, broken=True)
    done = oloproof("run", "oloproof.yaml", cwd=project)
    assert done.returncode == 5
    assert "the system raised RuntimeError: backend down" in done.stderr


def test_an_unknown_evaluator_parameter_says_what_was_meant(project: Path) -> None:
    (project / "oloproof.yaml").write_text(
        "system: bot:answer\ndataset: data/cases.jsonl\nevaluators:\n"
        "  - ExactMatch: {criterion: exact_label, feild: label}\n",
        encoding="utf-8",
    )
    done = oloproof("run", "oloproof.yaml", cwd=project)
    assert done.returncode == 3
    assert "ExactMatch has no parameter 'feild' (did you mean 'field'?)" in done.stderr
    assert "its parameters are criterion, field, expected_field" in done.stderr
    assert "Traceback" not in done.stderr


def test_nan_and_infinity_in_a_dataset_name_the_file_and_line(project: Path) -> None:
    cases = project / "data" / "cases.jsonl"
    lines = cases.read_text(encoding="utf-8").splitlines()
    lines[2] = '{"id": "x", "input": {"q": "refund", "score": NaN}, "expected": {"label": "r"}}'
    cases.write_text("\n".join(lines) + "\n", encoding="utf-8")
    done = oloproof("run", "oloproof.yaml", cwd=project)
    assert done.returncode == 3
    assert f"{cases}:3: " in done.stderr
    assert "NaN" in done.stderr
    lines[2] = '{"id": "x", "input": {"q": "refund"}, "expected": {"label": Infinity}}'
    cases.write_text("\n".join(lines) + "\n", encoding="utf-8")
    done = oloproof("run", "oloproof.yaml", cwd=project)
    assert done.returncode == 3
    assert f"{cases}:3: " in done.stderr
    assert "Infinity" in done.stderr


def test_a_broken_system_file_names_its_line(project: Path) -> None:
    (project / "bot.py").write_text("def answer(case)\n    return {}\n", encoding="utf-8")
    done = oloproof("run", "oloproof.yaml", cwd=project)
    assert done.returncode == 3
    assert f"{project / 'bot.py'}:1: SyntaxError" in done.stderr
    assert "Traceback" not in done.stderr


def test_a_malformed_database_url_is_refused_without_a_traceback(project: Path) -> None:
    done = oloproof("run", "oloproof.yaml", cwd=project, env=clean_env(DATABASE_URL="mysql://x/y"))
    assert done.returncode == 3
    assert "DATABASE_URL" in done.stderr
    assert "Traceback" not in done.stderr


def test_a_busy_port_says_so_and_suggests_another(project: Path) -> None:
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        done = oloproof("serve", f"--port={port}", "--no-worker", cwd=project)
    assert done.returncode == 3
    assert f"port {port} on 127.0.0.1 is already in use" in done.stderr
    assert f"--port {port + 1}" in done.stderr
    assert "serving" not in done.stderr + done.stdout
    assert "Traceback" not in done.stderr
