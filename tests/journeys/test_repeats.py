"""Repeats along the user's path: a script's `evaluate(..., repeats=3)` and a config's
`repeats: 3` run with `oloproof run`, over a system that is flaky on some cases."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from tests.journeys.conftest import run_user

DATASET = "".join(
    json.dumps({"id": f"q{i}", "input": {"q": i}, "expected": {"label": "a"}}) + "\n"
    for i in range(6)
)

COUNTING_BOT = '''
from pathlib import Path

CALLS = Path(__file__).parent / "calls"


def answer(question):
    """q0, q1 always right; q2, q3 always wrong; q4, q5 right on their 1st and 3rd call."""
    q = question["q"]
    CALLS.mkdir(exist_ok=True)
    with open(CALLS / f"q{q}.log", "a", encoding="utf-8") as handle:
        handle.write("call\\n")
    count = len((CALLS / f"q{q}.log").read_text(encoding="utf-8").splitlines())
    if q < 2:
        return {"label": "a"}
    if q < 4:
        return {"label": "b"}
    return {"label": "a" if count % 2 else "b"}
'''

CONFIG = """system: bot.py:answer
dataset: data.jsonl
evaluators:
  - ExactMatch: {criterion: right, field: label}
concurrency: 1
# The system keeps a count of its calls on disk, which the sandbox would forbid.
sandbox: off
repeats: 3
"""

SCRIPT = '''
from oloproof import current_case, evaluate
from oloproof.evaluators import ExactMatch


def answer(question):
    """q4 and q5 fail on their second repeat (the repeat is in the case's id)."""
    me = current_case().id
    wrong = question["q"] in (2, 3) or (question["q"] >= 4 and me.endswith("#r2"))
    return {"label": "b" if wrong else "a", "seen": me}


result = evaluate(answer, "data.jsonl", [ExactMatch(criterion="right", field="label")],
                  repeats=3)
print(result)
result.to_json("out.json")
'''


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    folder = tmp_path / "flaky"
    folder.mkdir()
    (folder / "data.jsonl").write_text(DATASET, encoding="utf-8")
    return folder


def _assert_figures(data: dict, report: str) -> None:  # type: ignore[type-arg]
    right = data["metrics"][0]
    assert right["estimate"] == pytest.approx((1 + 1 + 0 + 0 + 2 / 3 + 2 / 3) / 6)
    assert right["n_clusters"] == 6
    figures = data["provenance"]["repeats"]
    assert (figures["repeats"], figures["cases"]) == (3, 6)
    metric = figures["metrics"][0]
    assert metric["pass_at_k"]["estimate"] == pytest.approx(4 / 6)
    assert metric["pass_all_k"]["estimate"] == pytest.approx(2 / 6)
    assert metric["pass_all_k"]["lower"] <= 2 / 6 <= metric["pass_all_k"]["upper"]
    assert (metric["stable_pass"], metric["stable_fail"], metric["flaky"]) == (2, 2, 2)
    assert metric["flaky_cases"] == ["q4", "q5"]
    assert "pass@3 0.667" in report
    assert "2 stable pass, 2 stable fail, 2 flaky (q4, q5)" in report


def test_a_config_with_repeats_runs_every_case_three_times(folder: Path) -> None:
    (folder / "bot.py").write_text(COUNTING_BOT, encoding="utf-8")
    (folder / "oloproof.yaml").write_text(CONFIG, encoding="utf-8")
    ran = run_user(["oloproof", "run", "oloproof.yaml", "--json", "out.json"], folder)
    assert ran.returncode == 0, ran.stderr
    for q in range(6):  # three calls of the system per case, no more
        assert (folder / "calls" / f"q{q}.log").read_text().splitlines() == ["call"] * 3
    data = json.loads((folder / "out.json").read_text())
    assert [case["id"] for case in data["cases"][:3]] == ["q0#r1", "q0#r2", "q0#r3"]
    assert all(case["latency_ms"] is not None for case in data["cases"])
    _assert_figures(data, ran.stdout)
    assert "recorded run #1" in ran.stderr  # the store takes each repeat as a case of its own


def test_a_script_with_repeats_gives_each_repeat_its_own_call(folder: Path) -> None:
    (folder / "evals.py").write_text(SCRIPT, encoding="utf-8")
    ran = run_user(["python", "evals.py"], folder)
    assert ran.returncode == 0, ran.stderr
    data = json.loads((folder / "out.json").read_text())
    seen = [case["output"]["seen"] for case in data["cases"]]
    assert seen == [f"q{i}#r{j}" for i in range(6) for j in (1, 2, 3)]
    assert [case["repeat"] for case in data["cases"][:3]] == [1, 2, 3]
    _assert_figures(data, ran.stdout)


@pytest.mark.parametrize(
    ("value", "says"),
    [
        ("0", "'repeats' must be a positive whole number or auto, got"),
        ("-1", "'repeats' must be a positive whole number or auto, got"),
        ("true", "'repeats' must be a positive whole number or auto, got"),
        ("2.5", "'repeats' must be a positive whole number or auto, got"),
        ("sometimes", "'repeats' must be a positive whole number or auto, got 'sometimes'"),
        ("101", "'repeats' must be at most 100"),
    ],
)
def test_bad_repeats_in_a_config_name_file_line_and_key(
    folder: Path, value: str, says: str
) -> None:
    (folder / "bot.py").write_text(COUNTING_BOT, encoding="utf-8")
    (folder / "oloproof.yaml").write_text(CONFIG.replace("repeats: 3", f"repeats: {value}"))
    ran = run_user(["oloproof", "run", "oloproof.yaml"], folder)
    assert ran.returncode == 3
    assert "oloproof.yaml:8: " in ran.stderr
    assert says in ran.stderr
    assert not (folder / "calls").exists()


@pytest.mark.parametrize("where", [[], ["--submit"]])
@pytest.mark.parametrize(("flag", "says"), [("0", "between 1 and 100"), ("x", "whole number")])
def test_a_bad_repeats_flag_is_refused_before_any_case_runs(
    folder: Path, flag: str, says: str, where: list[str]
) -> None:
    (folder / "bot.py").write_text(COUNTING_BOT, encoding="utf-8")
    (folder / "oloproof.yaml").write_text(CONFIG, encoding="utf-8")
    ran = run_user(["oloproof", "run", "oloproof.yaml", "--repeats", flag, *where], folder)
    assert ran.returncode == 3
    assert says in ran.stderr
    assert "Traceback" not in ran.stderr
    assert not (folder / "calls").exists()
    assert "queued" not in ran.stderr


def test_a_run_recorded_as_it_goes_reports_the_same_figures(folder: Path) -> None:
    """Without --json the command records the repeats in batches and keeps their figures."""
    (folder / "bot.py").write_text(COUNTING_BOT, encoding="utf-8")
    (folder / "oloproof.yaml").write_text(CONFIG, encoding="utf-8")
    ran = run_user(["oloproof", "run", "oloproof.yaml"], folder)
    assert ran.returncode == 0, ran.stderr
    assert "(18 cases," in ran.stdout
    assert "right   0.556" in ran.stdout
    assert "pass@3 0.667 [0.132, 1.000], pass^3 0.333 [0.000, 0.824]" in ran.stdout
    assert "2 stable pass, 2 stable fail, 2 flaky (q4, q5)" in ran.stdout
    assert "recorded run #1" in ran.stderr


def recorded_with_repeats(folder: Path, *counts: str) -> None:
    """The counting bot run and recorded once with each of `--repeats COUNT`."""
    (folder / "bot.py").write_text(COUNTING_BOT, encoding="utf-8")
    (folder / "oloproof.yaml").write_text(CONFIG, encoding="utf-8")
    for repeats in counts:
        ran = run_user(["oloproof", "run", "oloproof.yaml", "--repeats", repeats], folder)
        assert ran.returncode == 0, ran.stderr


def test_runs_with_different_repeats_are_compared_on_each_cases_means(folder: Path) -> None:
    """`oloproof run --repeats 3`, then `--repeats 2`, then `oloproof compare 1 2`: each
    case's mean over its own repeats is paired with its mean over the other's."""
    recorded_with_repeats(folder, "3", "2")
    compared = run_user(["oloproof", "compare", "1", "2"], folder)
    assert compared.returncode == 0, compared.stderr
    # q4 and q5 were right on calls 1 and 3 of 3, then on call 5 of calls 4 and 5.
    assert "6 cases (6 in both runs)" in compared.stdout
    assert "right   0.556     0.500      -0.056" in compared.stdout
    assert "The runs repeated each case 3 and 2 times" in compared.stdout
    assert "cases against their own noise (3 → 2 repeats per case)" in compared.stdout
    assert "2 flaky" in compared.stdout
    as_json = run_user(["oloproof", "compare", "1", "2", "--json"], folder)
    found = json.loads(as_json.stdout)
    assert found["paired"] == "case means"
    figure = found["metrics"][0]
    assert figure["regressed"] == ["q4", "q5"]
    assert figure["n_pairs"] == 6
    assert "pairs: each case's mean over each run's own repeats" in figure["method"]


SEQUENTIAL_DATASET = "".join(
    json.dumps({"id": f"q{i}", "input": {"q": i}, "expected": {"label": "a"}}) + "\n"
    for i in range(60)
)

POLICY = """version: 1
sequential: {batch: 10}
rules:
  - metric: right
    min: 0.5
"""


def test_a_run_that_stops_when_decided_runs_whole_cases_three_times(folder: Path) -> None:
    """`oloproof run --until-decided` with `repeats: 3`: batch after batch of ten cases,
    each case's three calls in its batch, until the gate on the case means decides."""
    (folder / "data.jsonl").write_text(SEQUENTIAL_DATASET, encoding="utf-8")
    # Every case right on its 1st and 3rd call: 2/3 of its repeats.
    stable = (
        '    if q < 2:\n        return {"label": "a"}\n'
        '    if q < 4:\n        return {"label": "b"}\n'
    )
    counting = COUNTING_BOT.replace(stable, "")
    (folder / "bot.py").write_text(counting, encoding="utf-8")
    (folder / "oloproof.yaml").write_text(CONFIG + "policy: release.yaml\n", encoding="utf-8")
    (folder / "release.yaml").write_text(POLICY, encoding="utf-8")
    ran = run_user(
        ["oloproof", "run", "oloproof.yaml", "--until-decided", "--json", "out.json"], folder
    )
    assert ran.returncode == 0, ran.stdout + ran.stderr  # the gate passed
    data = json.loads((folder / "out.json").read_text())
    sequential = data["provenance"]["sequential"]
    assert sequential["horizon"] == 60
    assert sequential["n_run"] in (10, 20, 30, 40, 50)
    run = sorted(path.stem for path in (folder / "calls").iterdir())
    assert len(run) == sequential["n_run"]
    for name in run:  # every case run was run three times, never cut between batches
        assert (folder / "calls" / f"{name}.log").read_text().splitlines() == ["call"] * 3
    assert len(data["cases"]) == 3 * sequential["n_run"]
    assert data["metrics"][0]["estimate"] == pytest.approx(2 / 3)
    assert data["gate"]["outcome"] == "pass"
    assert data["provenance"]["repeats"]["repeats"] == 3


def test_a_reader_that_stops_early_leaves_no_traceback(folder: Path) -> None:
    """`oloproof compare 1 2 --cases all | head -1`: the command's output outgrows what the
    pipe holds once the reader has gone, and the command ends quietly."""
    rows = [{"id": f"q{i}", "input": {"q": i}, "expected": {"label": "a"}} for i in range(1500)]
    text = "".join(json.dumps(row) + "\n" for row in rows)
    (folder / "data.jsonl").write_text(text, encoding="utf-8")
    recorded_with_repeats(folder, "2", "3")
    command = Path(sys.executable).parent / "oloproof"
    ran = run_user(["sh", "-c", f"'{command}' compare 1 2 --cases all | head -1"], folder)
    assert ran.returncode == 0
    assert " vs " in ran.stdout
    assert "Traceback" not in ran.stderr, ran.stderr
    assert "internal error" not in ran.stderr


def test_a_repeated_release_is_gated_against_a_baseline_run_once(folder: Path) -> None:
    """A baseline recorded without repeats and a release run three times a case: the
    no_regression rule pairs each case's single try with its mean over the three."""
    (folder / "bot.py").write_text(COUNTING_BOT, encoding="utf-8")
    (folder / "oloproof.yaml").write_text(CONFIG, encoding="utf-8")
    once = run_user(
        ["oloproof", "run", "oloproof.yaml", "--repeats", "1", "--json", "v1.json"], folder
    )
    assert once.returncode == 0, once.stderr
    (folder / "release.yaml").write_text(
        "version: 1\nbaseline: {run: v1.json}\nrules:\n"
        "  - metric: right\n    no_regression: {margin: 0.5}\n",
        encoding="utf-8",
    )
    (folder / "gated.yaml").write_text(CONFIG + "policy: release.yaml\n", encoding="utf-8")
    gated = run_user(["oloproof", "run", "gated.yaml", "--json", "v2.json"], folder)
    # q4 and q5 right on call 1, then on call 3 of calls 2 to 4: 1 → 1/3 each.
    assert "difference -0.222" in gated.stdout, gated.stdout + gated.stderr
    figures = json.loads((folder / "v2.json").read_text(encoding="utf-8"))["gate"]["rules"][0]
    assert figures["figures"]["n_pairs"] == 6
    assert "each case's mean over each run's own repeats" in figures["figures"]["method"]
