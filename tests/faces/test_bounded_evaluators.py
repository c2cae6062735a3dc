"""Evaluators that misbehave, along the user's path: a script with top-level code run
with `python script.py`, and `oloproof run` on a project folder. Each run ends, the
verdict at fault is missing with the reason, and the result is printed."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

from tests.faces.conftest import clean_env, oloproof, write_project

SCRIPT = """\
import time

from oloproof import evaluate, system
from oloproof.evaluators import evaluator


@system(name="echo", version="1")
def echo(case):
    return case["text"]


@evaluator(criterion="patient", reads=("output",))
def patient(case):
    while case.output == "stuck":
        time.sleep(1)
    return True


rows = [{"id": f"c{i}", "input": {"text": text}} for i, text in enumerate(["a", "stuck", "b"])]
result = evaluate(echo, rows, [patient], timeout=2, record=False)
for case in result.cases:
    verdict = case.verdicts["patient"]
    print(case.id, verdict.value, verdict.error)
"""


def test_a_scripts_evaluator_that_sleeps_for_ever_is_cut_at_the_timeout(tmp_path: Path) -> None:
    script = tmp_path / "evaluate_echo.py"
    script.write_text(SCRIPT, encoding="utf-8")

    done = subprocess.run(
        [sys.executable, str(script)],
        cwd=tmp_path,
        env=clean_env(),
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )

    assert done.returncode == 0, done.stdout + done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == "c0 1.0 None"
    assert lines[1].startswith(
        "c1 None TimeoutError: the evaluator took longer than its 2 s time limit per verdict"
    )
    assert lines[2] == "c2 1.0 None"


def _project_with_metric(folder: Path, metric: str) -> None:
    write_project(folder, n=6)
    (folder / "metrics" / "label").mkdir(parents=True)
    (folder / "metrics" / "label" / "metric.py").write_text(
        textwrap.dedent(metric), encoding="utf-8"
    )
    config = folder / "oloproof.yaml"
    config.write_text(
        config.read_text(encoding="utf-8").replace(
            "  - ExactMatch: {criterion: exact_label, field: label}\n",
            "  - metrics/label/metric.py\n",
        ),
        encoding="utf-8",
    )


def test_a_metric_that_calls_sys_exit_loses_its_verdict_and_the_run_prints_its_result(
    tmp_path: Path,
) -> None:
    folder = tmp_path / "my-evals"
    _project_with_metric(
        folder,
        """\
        import sys

        def score(input, output, expected=None):
            if input["q"].endswith("#3"):
                sys.exit()
            right = output["label"] == expected["label"]
            return (1.0 if right else 0.0), {"feedback": "checked"}
        """,
    )

    done = oloproof("run", "oloproof.yaml", "--no-record", cwd=folder)

    assert done.returncode == 0, done.stdout + done.stderr
    (row,) = [line for line in done.stdout.splitlines() if line.startswith("label ")]
    assert row.split()[1] == "1.000"
    assert row.split()[4:7] == ["5", "1", "!"]  # observed 5, missing 1
    assert "SystemExit (raised by the evaluator's code" in done.stdout


def test_a_metric_whose_regular_expression_backtracks_for_ever_is_cut_off(tmp_path: Path) -> None:
    folder = tmp_path / "my-evals"
    _project_with_metric(
        folder,
        """\
        import re

        def score(input, output, expected=None):
            text = "a" * 40 + "!" if input["q"].endswith("#4") else "aaa"
            return (1.0 if re.match(r"(a+)+$", text) else 0.0), {"feedback": "matched"}
        """,
    )
    config = folder / "oloproof.yaml"
    config.write_text(config.read_text(encoding="utf-8") + "timeout: 2\n", encoding="utf-8")

    done = oloproof("run", "oloproof.yaml", "--no-record", cwd=folder)

    assert done.returncode == 0, done.stdout + done.stderr
    assert "TimeoutError: the evaluator took longer than its 2 s time limit" in done.stdout
    (row,) = [line for line in done.stdout.splitlines() if line.startswith("label ")]
    assert "1 !" in row


def test_a_configs_evaluator_timeout_is_each_verdicts_limit_and_a_bad_one_is_refused(
    tmp_path: Path,
) -> None:
    folder = tmp_path / "my-evals"
    _project_with_metric(
        folder,
        """\
        import time

        def score(input, output, expected=None):
            while input["q"].endswith("#2"):
                time.sleep(1)
            return 1.0, {"feedback": "done"}
        """,
    )
    config = folder / "oloproof.yaml"
    written = config.read_text(encoding="utf-8")
    config.write_text(written + "evaluator_timeout: 1\n", encoding="utf-8")

    done = oloproof("run", "oloproof.yaml", "--no-record", cwd=folder)

    assert done.returncode == 0, done.stdout + done.stderr
    assert (
        "TimeoutError: the evaluator took longer than its 1 s time limit per verdict "
        "(evaluator_timeout)" in done.stdout
    )

    config.write_text(written + "evaluator_timeout: 0\n", encoding="utf-8")
    refused = oloproof("run", "oloproof.yaml", "--no-record", cwd=folder)

    assert refused.returncode == 3, refused.stdout + refused.stderr
    assert "evaluator_timeout" in refused.stderr
    assert "Traceback" not in refused.stderr
