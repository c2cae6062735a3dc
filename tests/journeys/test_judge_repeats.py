"""Judge repeats along the user's path: a config with a model judge and `judge_repeats: 3`
run with `oloproof run`, the judge (a stand-in server) answering differently each time."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.journeys.conftest import run_user
from tests.support.fake_openai import FakeOpenAI
from tests.support.wavering_judge import judge_environment, judge_that_wavers

DATASET = "".join(
    json.dumps({"id": f"q{i}", "input": {"question": f"question {i}"}, "expected": {}}) + "\n"
    for i in range(5)
)

BOT = """
def answer(question):
    return {"text": "Thanks for asking about " + question["question"]}
"""

CONFIG = """system: bot.py:answer
dataset: data.jsonl
evaluators:
  - RubricJudge: {criterion: polite, rubric: 'The answer is polite.'}
  - Contains: {criterion: thanks, value: Thanks}
repeats: 2
judge_repeats: 3
"""


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    folder = tmp_path / "judged"
    folder.mkdir()
    (folder / "data.jsonl").write_text(DATASET, encoding="utf-8")
    (folder / "bot.py").write_text(BOT, encoding="utf-8")
    (folder / "oloproof.yaml").write_text(CONFIG, encoding="utf-8")
    return folder


def _run(folder: Path, server: FakeOpenAI, *args: str) -> tuple[int, str, str]:
    ran = run_user(
        ["oloproof", "run", "oloproof.yaml", *args],
        folder,
        **judge_environment(server),
    )
    return ran.returncode, ran.stdout, ran.stderr


def test_a_model_judge_judges_each_output_three_times(
    folder: Path, fake_openai: FakeOpenAI
) -> None:
    judge_that_wavers(fake_openai)
    code, out, err = _run(folder, fake_openai, "--json", "out.json")
    assert code == 0, err
    # Both repeats of a case give the same output: the judge sees each text 2 × 3 times,
    # and the verdict cache keys on the repeat and the judge repeat, so none is reused.
    assert fake_openai.request_count == 5 * 2 * 3
    data = json.loads((folder / "out.json").read_text())
    polite = next(m for m in data["metrics"] if m["metric"] == "polite")
    thanks = next(m for m in data["metrics"] if m["metric"] == "thanks")
    assert polite["value_type"] == "score"
    # Of the six times the judge sees a case's text, only the second is FAIL: one repeat's
    # output scores 2/3, the other's 1. Mean: 5/6.
    values = {case["id"]: case["verdicts"]["polite"]["value"] for case in data["cases"]}
    for i in range(5):
        pair = sorted([values[f"q{i}#r1"], values[f"q{i}#r2"]])
        assert pair == [pytest.approx(2 / 3), pytest.approx(1.0)]
    assert polite["estimate"] == pytest.approx(5 / 6)
    assert thanks["estimate"] == 1.0
    judging = data["provenance"]["judging"]
    assert judging["polite"]["judged"] == 30
    assert judging["thanks"]["judged"] + judging["thanks"]["cached"] == 10  # once per output
    figures = data["provenance"]["judge_repeats"]
    (split,) = figures["metrics"]
    assert (figures["judge_repeats"], figures["repeats"], split["metric"]) == (3, 2, "polite")
    assert split["judge_share"] + split["system_share"] == pytest.approx(1.0)
    # The two outputs' means differ by no more than the judge's own spread explains.
    assert (split["judge_share"], split["system_share"]) == (1.0, 0.0)
    assert "judge repeats: each output judged 3 times" in out
    assert f"{100 * split['judge_share']:.0f} % from the judge" in out


def test_the_flag_overrides_the_config_and_a_second_run_reads_the_cache(
    folder: Path, fake_openai: FakeOpenAI
) -> None:
    judge_that_wavers(fake_openai)
    code, _, err = _run(folder, fake_openai, "--judge-repeats", "2", "--repeats", "1")
    assert code == 0, err
    assert fake_openai.request_count == 5 * 2
    code, out, err = _run(folder, fake_openai, "--judge-repeats", "2", "--repeats", "1")
    assert code == 0, err
    assert fake_openai.request_count == 5 * 2  # every judge repeat's verdict was cached
    assert "polite  0.500" in out
    assert "run with repeats to tell the system's apart" in out


@pytest.mark.parametrize(
    ("flag", "says"), [("0", "between 1 and 100"), ("two", "whole number of verdicts per output")]
)
def test_a_bad_judge_repeats_flag_is_refused_before_any_case_runs(
    folder: Path, fake_openai: FakeOpenAI, flag: str, says: str
) -> None:
    code, _, err = _run(folder, fake_openai, "--judge-repeats", flag)
    assert code == 3
    assert says in err
    assert "Traceback" not in err
    assert fake_openai.request_count == 0


@pytest.mark.parametrize(
    ("value", "says"),
    [("0", "'judge_repeats' must be a positive whole number, got"), ("500", "must be at most 100")],
)
def test_bad_judge_repeats_in_a_config_name_file_line_and_key(
    folder: Path, fake_openai: FakeOpenAI, value: str, says: str
) -> None:
    (folder / "oloproof.yaml").write_text(
        CONFIG.replace("judge_repeats: 3", f"judge_repeats: {value}")
    )
    code, _, err = _run(folder, fake_openai)
    assert code == 3
    assert "oloproof.yaml:7: " in err
    assert says in err
    assert fake_openai.request_count == 0


POLICY = """version: 1
sequential: {batch: 2}
rules:
  - metric: polite
    min: 0.95
"""


def test_a_run_that_stops_when_decided_judges_each_output_three_times(
    folder: Path, fake_openai: FakeOpenAI
) -> None:
    """`--until-decided` adds cases, not repeats: without `repeats` in the config, each
    output is still judged `--judge-repeats` times, batch after batch."""
    judge_that_wavers(fake_openai)
    config = CONFIG.replace("repeats: 2\n", "").replace("judge_repeats: 3\n", "")
    (folder / "oloproof.yaml").write_text(config + "policy: release.yaml\n", encoding="utf-8")
    (folder / "release.yaml").write_text(POLICY, encoding="utf-8")
    code, out, err = _run(
        folder, fake_openai, "--until-decided", "--judge-repeats", "3", "--json", "out.json"
    )
    assert code == 1, err  # the gate failed
    data = json.loads((folder / "out.json").read_text())
    ran = data["provenance"]["sequential"]["n_run"]
    assert ran >= 2
    assert len(data["cases"]) == ran
    assert fake_openai.request_count == 3 * ran  # each output PASS, FAIL, PASS
    values = [case["verdicts"]["polite"]["value"] for case in data["cases"]]
    assert values == [pytest.approx(2 / 3)] * ran
    # Below 0.95 on every case: the gate fails once the evidence says so.
    assert data["gate"]["outcome"] == "fail"
    assert data["provenance"]["judge_repeats"]["judge_repeats"] == 3
    assert "judge repeats: each output judged 3 times" in out
