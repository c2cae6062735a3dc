"""The hint a mistake gets says what was meant: a case id's close match, a metric's
parameters in the wrong order, a system that reads the row instead of its input — each
said once, with the file and the fix.

Every command is the installed `oloproof`, run from a project folder outside the
repository with the user's environment.
"""

from __future__ import annotations

from pathlib import Path

from tests.faces.conftest import write_project
from tests.journeys.conftest import run_user


def test_an_unknown_case_id_names_the_close_match(tmp_path: Path) -> None:
    project = tmp_path / "my-evals"
    write_project(project)
    assert run_user(["oloproof", "run", "oloproof.yaml"], cwd=project).returncode == 0
    (project / "labels.csv").write_text(
        "case_id,metric,value\nc01,exact_label,pass\nc7,exact_label,fail\n", encoding="utf-8"
    )
    (project / "labels.jsonl").write_text(
        '{"case_id": "C-3", "metric": "exact_label", "value": "pass"}\n', encoding="utf-8"
    )
    for args, said in (
        (
            ["label", "1", "c7", "exact_label", "pass"],
            "run 1 has no case 'c7' (did you mean 'c07'?)",
        ),
        (
            ["annotate", "1", "c7", "--rating", "pass"],
            "run 1 has no case 'c7' (did you mean 'c07'?)",
        ),
        (
            ["label", "import", "labels.csv", "--run", "1"],
            "labels.csv line 3: run 1 has no case 'c7' (did you mean 'c07'?)",
        ),
        (
            ["label", "import", "labels.jsonl", "--run", "1"],
            "labels.jsonl line 1: run 1 has no case 'C-3' (did you mean 'c03'?)",
        ),
    ):
        done = run_user(["oloproof", *args], cwd=project)
        assert done.returncode == 3, done.stderr
        assert said in done.stderr
        assert "Traceback" not in done.stderr
    done = run_user(
        ["oloproof", "label", "1", "nothing-like-it", "exact_label", "pass"], cwd=project
    )
    assert done.returncode == 3
    assert "has no case 'nothing-like-it'\n" in done.stderr  # no hint when nothing is close


def test_a_metric_with_its_parameters_in_another_order_is_refused_before_any_case(
    project: Path,
) -> None:
    (project / "label_match.py").write_text(
        "\n\ndef score(output, expected):\n"
        "    return float(output['label'] == expected['label']), {'feedback': ''}\n",
        encoding="utf-8",
    )
    write_project(project, extra_yaml="  - label_match.py\n")
    done = run_user(["oloproof", "run", "oloproof.yaml", "--no-record"], cwd=project)
    assert done.returncode == 3, done.stdout + done.stderr
    assert (
        f"{project / 'label_match.py'}:3: score(output, expected) is called as "
        "score(input, output), by position, so its parameter 'output' would receive the "
        "case's input; name the parameters in that order: def score(input, output, "
        "expected=None)"
    ) in done.stderr
    assert "KeyError" not in done.stderr
    assert "Traceback" not in done.stderr


def test_a_metrics_contract_error_is_printed_once(project: Path) -> None:
    (project / "bad_metric.py").write_text(
        "def score(input, output, expected=None):\n    return 1.0\n", encoding="utf-8"
    )
    write_project(project, extra_yaml="  - bad_metric.py\n")
    done = run_user(["oloproof", "run", "oloproof.yaml", "--no-record"], cwd=project)
    assert done.returncode == 5
    both = done.stdout + done.stderr
    assert both.count("score() must return a pair") == 1, both
    assert "first (case c00): ContractError" in done.stdout
    assert "the whole message is in the table above" in done.stderr
    alone = run_user(
        ["oloproof", "run", "oloproof.yaml", "--no-record", "--json", "-"], cwd=project
    )
    assert alone.returncode == 5
    assert alone.stderr.count("score() must return a pair") == 1  # no table: said here, whole


def test_a_system_reading_the_row_is_told_it_receives_the_input(project: Path) -> None:
    (project / "bot.py").write_text(
        "def answer(case):\n    return {'label': case['input']['q']}\n", encoding="utf-8"
    )
    done = run_user(["oloproof", "run", "oloproof.yaml", "--no-record"], cwd=project)
    assert done.returncode == 5
    assert (
        "the system raised KeyError: 'input' — a system receives the row's input itself, not "
        "the row: read case['q'], not case['input']['q'] (this case's input has the keys 'q')"
    ) in done.stderr
    (project / "bot.py").write_text(
        "def answer(case):\n    return {'label': case['expected']['label']}\n", encoding="utf-8"
    )
    done = run_user(["oloproof", "run", "oloproof.yaml", "--no-record"], cwd=project)
    assert "a system never receives the row's expected value" in done.stderr
    assert "Traceback" not in done.stderr
