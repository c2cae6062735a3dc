"""`repeats: auto` along the user's path: a config run twice with `oloproof run`, then a
script's `evaluate(..., repeats="auto")`, over a system that is flaky on some cases.
The first run has no earlier run to read and tries every case five times; the next
ones try the stable cases once and the flaky ones five times, and their figures weigh
each case once."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.journeys.conftest import notebook_printed, run_user
from tests.journeys.test_repeats import CONFIG, COUNTING_BOT, DATASET

AUTO_CONFIG = CONFIG.replace("repeats: 3", "repeats: auto")

POLICY = """version: 1
sequential: {batch: 2}
rules:
  - metric: right
    min: 0.5
"""

SCRIPT = """
from bot import answer
from oloproof import evaluate
from oloproof.evaluators import ExactMatch

result = evaluate(answer, "data.jsonl", [ExactMatch(criterion="right", field="label")],
                  repeats="auto", sandbox="off", concurrency=1)
print(result)
result.to_json("script.json")
"""


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    folder = tmp_path / "flaky"
    folder.mkdir()
    (folder / "data.jsonl").write_text(DATASET, encoding="utf-8")
    (folder / "bot.py").write_text(COUNTING_BOT, encoding="utf-8")
    (folder / "oloproof.yaml").write_text(AUTO_CONFIG, encoding="utf-8")
    return folder


def calls(folder: Path) -> dict[str, int]:
    return {q: len((folder / "calls" / f"{q}.log").read_text().splitlines()) for q in QS}


QS = [f"q{i}" for i in range(6)]


def run_auto(folder: Path, json_name: str) -> tuple[dict, str]:  # type: ignore[type-arg]
    ran = run_user(["oloproof", "run", "oloproof.yaml", "--json", json_name], folder)
    assert ran.returncode == 0, ran.stderr
    return json.loads((folder / json_name).read_text()), ran.stdout


def test_auto_tries_the_flaky_cases_five_times_and_the_stable_ones_once(folder: Path) -> None:
    first, report = run_auto(folder, "first.json")
    assert calls(folder) == dict.fromkeys(QS, 5)  # nothing earlier to read: five each
    auto = first["provenance"]["repeats"]["auto"]
    assert (auto["evidence_runs"], auto["cases_most"], auto["calls"]) == (0, 6, 30)
    assert "no earlier run of these cases: every case ran the most times" in report
    # q4 and q5 are right on their odd calls: 3 of 5 here.
    assert first["metrics"][0]["estimate"] == pytest.approx((1 + 1 + 0 + 0 + 0.6 + 0.6) / 6)

    second, report = run_auto(folder, "second.json")
    assert calls(folder) == {"q0": 6, "q1": 6, "q2": 6, "q3": 6, "q4": 10, "q5": 10}
    auto = second["provenance"]["repeats"]["auto"]
    assert (auto["evidence_runs"], auto["cases_once"], auto["cases_most"]) == (1, 4, 2)
    assert (auto["calls"], auto["uniform_calls"]) == (14, 30)  # under half of five each
    assert "2 of 6 cases ran 5 times, 4 stable ones once; 14 calls" in report
    ids = [case["id"] for case in second["cases"]]
    assert ids[:3] == ["q0#r1", "q1#r1", "q2#r1"] or "q0#r2" not in ids
    # Each case weighed once: q4 and q5 right on calls 7 and 9 of 6 to 10.
    right = second["metrics"][0]
    assert right["estimate"] == pytest.approx((1 + 1 + 0 + 0 + 0.4 + 0.4) / 6)
    assert right["n_observed"] == 6
    assert "each case weighed once" in right["method"]
    assert right["interval"]["lower"] <= right["estimate"] <= right["interval"]["upper"]
    figures = second["provenance"]["repeats"]["metrics"][0]
    assert (figures["flaky"], figures["tried_once"]) == (2, 4)
    assert "pass_at_k" not in figures

    compared = run_user(["oloproof", "compare", "1", "2"], folder)
    assert compared.returncode == 0, compared.stderr
    assert "6 cases (6 in both runs)" in compared.stdout
    assert "pairs: each case's mean over each run's own repeats" in compared.stdout
    assert "(auto, up to 5 → auto, up to 5 repeats per case)" in compared.stdout
    assert "The runs repeated each case up to 5 (repeats: auto) and up to 5" in compared.stdout
    as_json = json.loads(run_user(["oloproof", "compare", "1", "2", "--json"], folder).stdout)
    assert as_json["paired"] == "case means"
    assert as_json["repeats"] == {"baseline": "auto", "candidate": "auto"}

    (folder / "evals.py").write_text(SCRIPT, encoding="utf-8")
    ran = run_user(["python", "evals.py"], folder)
    assert ran.returncode == 0, ran.stderr
    script = json.loads((folder / "script.json").read_text())
    assert script["provenance"]["repeats"]["auto"]["evidence_runs"] >= 1
    assert (calls(folder)["q0"], calls(folder)["q4"]) == (7, 15)


def test_auto_is_refused_where_it_is_not_available_before_any_case_runs(folder: Path) -> None:
    (folder / "policy.yaml").write_text(POLICY, encoding="utf-8")
    (folder / "oloproof.yaml").write_text(AUTO_CONFIG + "policy: policy.yaml\n")
    queued = run_user(["oloproof", "run", "oloproof.yaml", "--submit"], folder)
    assert queued.returncode == 3
    assert "oloproof.yaml:8: repeats: auto is not available with a run that stops when" in (
        queued.stderr
    )
    assert "Traceback" not in queued.stderr
    flagged = run_user(["oloproof", "run", "oloproof.yaml", "--repeats", "often"], folder)
    assert flagged.returncode == 3
    assert "--repeats must be a whole number of runs per case or auto, got 'often'" in (
        flagged.stderr
    )
    decided = run_user(["oloproof", "run", "oloproof.yaml", "--until-decided"], folder)
    assert decided.returncode == 3
    assert "Traceback" not in decided.stderr
    assert not (folder / "calls").exists()


def test_an_auto_release_is_gated_on_each_cases_mean_against_the_last_one(folder: Path) -> None:
    """The second auto run gated by a policy whose baseline is the first: its rules read
    the case-weighted figure, and no_regression pairs each case's means."""
    first, _ = run_auto(folder, "v1.json")
    (folder / "release.yaml").write_text(
        "version: 1\nbaseline: {run: v1.json}\nrules:\n  - metric: right\n    min: 0.2\n"
        "  - metric: right\n    no_regression: {margin: 0.5}\n",
        encoding="utf-8",
    )
    (folder / "gated.yaml").write_text(AUTO_CONFIG + "policy: release.yaml\n", encoding="utf-8")
    gated = run_user(["oloproof", "run", "gated.yaml", "--json", "v2.json"], folder)
    assert gated.returncode == 2, gated.stdout + gated.stderr  # six cases decide nothing
    second = json.loads((folder / "v2.json").read_text(encoding="utf-8"))
    assert second["gate"]["outcome"] == "inconclusive"
    assert second["provenance"]["repeats"]["auto"]["calls"] == 14
    least, no_regression = second["gate"]["rules"]
    assert least["figures"]["estimate"] == pytest.approx((2 + 0.8) / 6)
    # q4 and q5: 3 of 5 right, then 2 of 5 (calls 6 to 10): -0.2 each, over six cases.
    assert no_regression["figures"]["n_pairs"] == 6
    assert no_regression["figures"]["difference"] == pytest.approx(-0.4 / 6)
    assert "each case's mean over each run's own repeats" in no_regression["figures"]["method"]
    assert first["gate"] is None


NOTEBOOK_SYSTEM = """
@system(name="wavering", version="1")
def wavering(question):
    # q4 and q5 wrong on their second try only; q2 and q3 always wrong.
    me = current_case().id
    wrong = question["q"] in (2, 3) or (question["q"] >= 4 and me.endswith("#r2"))
    return {"label": "b" if wrong else "a"}
"""


def test_auto_in_a_notebook_reads_the_cell_run_before_it(
    folder: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two notebook cells under a real kernel, each `evaluate(..., repeats="auto")`: the
    second tries the four stable cases once, and the system runs protected."""
    run = (
        'result = evaluate(wavering, "data.jsonl", '
        '[ExactMatch(criterion="right", field="label")], repeats="auto")\n'
        'print("AUTO", json.dumps(result.provenance["repeats"]["auto"]), '
        'result.provenance["execution"]["measurements"], result.metrics[0].estimate)'
    )
    cells = [
        "import json\nfrom oloproof import current_case, evaluate, system\n"
        "from oloproof.evaluators import ExactMatch",
        NOTEBOOK_SYSTEM.strip(),
        run,
        run,
    ]
    said = [printed.split() for printed in notebook_printed(cells, folder, monkeypatch)[2:]]
    first, second = (line[line.index("AUTO") + 1 :] for line in said)
    assert json.loads(" ".join(first[:-2]))["calls"] == 30
    allocation = json.loads(" ".join(second[:-2]))
    assert (allocation["evidence_runs"], allocation["calls"]) == (1, 14)
    assert second[-2] == "protected"
    assert float(second[-1]) == pytest.approx((2 + 0.8 + 0.8) / 6)


def test_a_case_added_to_the_file_runs_five_times_and_the_others_as_before(
    folder: Path,
) -> None:
    """The dataset file grows by a case between runs: its digest changes, but the earlier
    runs of the same file still say which of its cases are stable."""
    run_auto(folder, "first.json")
    added = {"id": "q6", "input": {"q": 6}, "expected": {"label": "a"}}
    with (folder / "data.jsonl").open("a", encoding="utf-8") as handle:
        handle.write(json.dumps(added) + "\n")
    grown, report = run_auto(folder, "grown.json")
    auto = grown["provenance"]["repeats"]["auto"]
    assert (auto["evidence_runs"], auto["cases_once"], auto["cases_most"]) == (1, 4, 3)
    assert (folder / "calls" / "q6.log").read_text().splitlines() == ["call"] * 5
    assert calls(folder)["q0"] == 6
    assert "3 of 7 cases ran 5 times" in report
