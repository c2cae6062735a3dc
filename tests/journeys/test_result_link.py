"""`print(result)` after `evaluate()` ends with the recorded run's dashboard page, and
how to open it while no dashboard has served the store; `oloproof compare` refuses runs
of different datasets as the compare page does (exit code 3)."""

from __future__ import annotations

from pathlib import Path

from tests.journeys.conftest import readme_block, run_user

SCRIPT = """
{system}

result = evaluate(
    system=answer,
    dataset="data/{dataset}",
    evaluators=[ExactMatch(criterion="exact_label", field="label")],
)
print(result)
"""


def script(folder: Path, dataset: str = "example.jsonl") -> str:
    system = readme_block("In 30 seconds").split("\n\nresult = evaluate(")[0]
    (folder / "pyproject.toml").write_text("[project]\nname = 'my-evals'\n", encoding="utf-8")
    (folder / "evals.py").write_text(
        SCRIPT.format(system=system, dataset=dataset), encoding="utf-8"
    )
    return "evals.py"


def test_print_result_gives_the_runs_page_and_how_to_open_it(user_folder: Path) -> None:
    first = run_user(["python", script(user_folder)], user_folder)
    assert first.returncode == 0, first.stderr
    assert "recorded run #1 → http://127.0.0.1:8000/runs/1/" in first.stdout
    assert "start one with `oloproof serve` in this project's folder" in first.stdout
    assert "then open runs/1/ on it" in first.stdout

    behind_proxy = run_user(
        ["python", "evals.py"], user_folder, OLOPROOF_DASHBOARD_URL="https://evals.example.com"
    )
    assert behind_proxy.returncode == 0, behind_proxy.stderr
    assert "recorded run #2 → https://evals.example.com/runs/2/" in behind_proxy.stdout
    assert "oloproof serve" not in behind_proxy.stdout


def test_the_command_says_the_runs_page_once_as_its_last_line(user_folder: Path) -> None:
    system = readme_block("In 30 seconds").split("\n\nresult = evaluate(")[0]
    (user_folder / "pyproject.toml").write_text("[project]\nname = 'my-evals'\n")
    (user_folder / "bot.py").write_text(system + "\n", encoding="utf-8")
    (user_folder / "oloproof.yaml").write_text(
        "system: bot.py:answer\ndataset: data/example.jsonl\n"
        "evaluators:\n  - ExactMatch: {criterion: exact_label, field: label}\n",
        encoding="utf-8",
    )
    done = run_user(["oloproof", "run", "oloproof.yaml"], user_folder)
    assert done.returncode == 0, done.stderr
    assert "recorded run #1" not in done.stdout
    assert done.stderr.strip().splitlines()[-1] == "recorded run #1 → http://127.0.0.1:8000/runs/1/"


def test_compare_refuses_runs_of_different_datasets_with_exit_code_3(user_folder: Path) -> None:
    assert run_user(["python", script(user_folder)], user_folder).returncode == 0
    rows = (user_folder / "data" / "example.jsonl").read_text(encoding="utf-8").splitlines()
    (user_folder / "data" / "fewer.jsonl").write_text("\n".join(rows[:10]) + "\n")
    fewer = run_user(["python", script(user_folder, "fewer.jsonl")], user_folder)
    assert fewer.returncode == 0, fewer.stderr
    same = run_user(["oloproof", "compare", "1", "1"], user_folder)
    assert same.returncode == 0, same.stderr

    compared = run_user(["oloproof", "compare", "1", "2"], user_folder)
    assert compared.returncode == 3
    assert "the runs were evaluated on different datasets" in compared.stderr
    assert "a paired comparison needs the same cases" in compared.stderr
    assert compared.stdout == ""
