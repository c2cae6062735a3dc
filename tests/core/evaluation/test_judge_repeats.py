"""Judge repeats in the engine: a model judge asked j times per output, the score their
mean, each asking cached apart, and the variance split between system and judge."""

from __future__ import annotations

import itertools
import json
from collections import Counter
from typing import Any

import pytest

import oloproof_core as engine
from oloproof_core.cases.verdict import Verdict
from oloproof_core.errors import ConfigError
from oloproof_core.evaluation.judge_variance import variance_split
from oloproof_core.judging.evaluators import ExactMatch, RubricJudge
from oloproof_core.judging.judge_repeats import mean_verdict
from oloproof_core.results.store import InMemoryStore
from tests.support.fake_openai import FakeOpenAI, Reply, Request

ROWS = [{"id": f"q{i}", "input": {"q": i}, "expected": {"label": "a"}} for i in range(4)]


def _answer(question: dict[str, int]) -> dict[str, str]:
    return {"label": "a", "text": f"answer {question['q']}"}


def _every_third_fails(server: FakeOpenAI) -> None:
    """PASS, PASS, FAIL, PASS, PASS, FAIL, ... in the order the judge is asked."""
    asked = itertools.count(1)

    def reply(request: Request) -> Reply:
        word = "FAIL" if next(asked) % 3 == 0 else "PASS"
        return Reply(json.dumps({"verdict": word, "reason": f"{word.lower()}ed"}))

    server.respond_with(reply)


def _run(store: Any, **options: Any) -> Any:
    evaluators = [
        RubricJudge(criterion="polite", rubric="The answer is polite."),
        ExactMatch(criterion="right", field="label"),
    ]
    return engine.run_evaluation(
        system=_answer,
        dataset=ROWS,
        evaluators=evaluators,
        store=store,
        isolation="thread",
        concurrency=1,
        **options,
    )


def test_a_model_judge_judges_each_output_j_times_and_scores_their_mean(
    models_on: FakeOpenAI,
) -> None:
    _every_third_fails(models_on)
    result = _run(InMemoryStore(), judge_repeats=3)
    assert models_on.request_count == 4 * 3  # the judge three times per output
    polite = result.metric("polite")
    # Each output: two PASS and one FAIL, in some order: a pass share of 2/3.
    assert [case.verdicts["polite"].value for case in result.cases] == [pytest.approx(2 / 3)] * 4
    assert (polite.value_type, polite.estimate) == ("score", pytest.approx(2 / 3))
    assert polite.interval.lower < 2 / 3 < polite.interval.upper
    assert result.provenance["judging"]["polite"]["judged"] == 12
    # ExactMatch answers the same each time: judged once per output.
    assert result.provenance["judging"]["right"]["judged"] == 4
    described = {e["criterion"]: e for e in result.provenance["evaluators"]}
    assert described["polite"]["parameters"]["judge_repeats"] == 3
    assert "judge repeat 3: failed" in result.cases[0].verdicts["polite"].feedback


def test_each_judge_repeat_has_its_own_cache_entry(models_on: FakeOpenAI) -> None:
    _every_third_fails(models_on)
    store = InMemoryStore()
    _run(store, judge_repeats=3)
    assert models_on.request_count == 12
    again = _run(store, judge_repeats=3)  # every asking found in the cache
    assert models_on.request_count == 12
    assert again.provenance["judging"]["polite"] == {
        "judged": 0,
        "cached": 12,
        "failed": 0,
        "skipped": 0,
    }
    _run(store, judge_repeats=5)  # only the 4th and 5th askings are new
    assert models_on.request_count == 12 + 4 * 2
    once = _run(store)  # a run without judge repeats reads the first asking's verdict
    assert models_on.request_count == 20
    # The first asking judged the four outputs in a row: PASS, PASS, FAIL, PASS.
    assert [case.verdicts["polite"].value for case in once.cases] == [1.0, 1.0, 0.0, 1.0]
    assert once.metric("polite").value_type == "pass_fail"


def test_judge_repeats_with_repeats_split_the_variance(models_on: FakeOpenAI) -> None:
    _every_third_fails(models_on)
    result = _run(InMemoryStore(), judge_repeats=3, repeats=2)
    assert models_on.request_count == 4 * 2 * 3
    figures = result.provenance["judge_repeats"]
    assert (figures["judge_repeats"], figures["repeats"]) == (3, 2)
    (polite,) = figures["metrics"]
    # Every output got two PASS and one FAIL: all the spread is the judge's.
    assert polite["judge_variance"] == pytest.approx(1 / 3, abs=1e-6)
    assert (polite["system_variance"], polite["system_share"], polite["judge_share"]) == (
        0.0,
        0.0,
        1.0,
    )
    assert (polite["outputs"], polite["cases"]) == (8, 4)
    assert "100 % from the judge" in str(result)


def test_the_variance_split_of_known_values() -> None:
    values = {
        "a#r1": [1.0, 0.0],
        "a#r2": [1.0, 1.0],
        "b#r1": [0.0, 0.0],
        "b#r2": [1.0, 1.0],
    }
    split = variance_split(values, repeats=2)
    # Within outputs: 0.5 / 4 degrees of freedom. Between: mean of 0.125 and 0.5, less 0.125 / 2.
    assert split["judge_variance"] == pytest.approx(0.125)
    assert split["system_variance"] == pytest.approx(0.25)
    assert split["system_share"] == pytest.approx(2 / 3, abs=1e-6)
    assert split["judge_share"] == pytest.approx(1 / 3, abs=1e-6)


def test_without_repeats_the_systems_share_is_not_told_apart() -> None:
    split = variance_split({"a": [1.0, 0.0], "b": [1.0, 1.0]}, repeats=1)
    assert split["judge_variance"] == pytest.approx(0.25)
    assert (split["system_variance"], split["system_share"], split["judge_share"]) == (
        None,
        None,
        None,
    )


def test_a_failed_asking_is_left_out_of_the_mean() -> None:
    failed = Verdict.failed_to_judge("ContractError: not JSON")
    combined = mean_verdict([Verdict(1.0), failed, Verdict(0.0)])
    assert combined.value == 0.5
    assert "judge repeat 2: ContractError: not JSON" in (combined.feedback or "")
    assert mean_verdict([failed, failed]).missing


@pytest.mark.parametrize(
    ("value", "says"),
    [
        (0, "between 1 and 100"),
        (101, "between 1 and 100"),
        (True, "whole number"),
        (2.5, "whole number"),
        ("3", "whole number"),
    ],
)
def test_bad_judge_repeats_are_refused_before_any_case_runs(value: Any, says: str) -> None:
    calls: Counter[int] = Counter()

    def system(question: dict[str, int]) -> dict[str, str]:
        calls[question["q"]] += 1
        return {"label": "a"}

    with pytest.raises(ConfigError, match=says):
        engine.run_evaluation(
            system=system,
            dataset=ROWS,
            evaluators=[ExactMatch(criterion="right", field="label")],
            store=InMemoryStore(),
            isolation="thread",
            judge_repeats=value,
        )
    assert not calls


def test_a_config_for_the_workers_keeps_its_judge_repeats(tmp_path: Any) -> None:
    """The check a submitted config goes through (the API, the form, `--submit`) keeps
    `judge_repeats` for the workers, which judge repeatedly as one process does."""
    (tmp_path / "data.jsonl").write_text('{"id": "a", "input": {}, "expected": {}}\n')
    (tmp_path / "bot.py").write_text("def answer(question):\n    return {}\n")
    config = {
        "system": "bot.py:answer",
        "dataset": "data.jsonl",
        "evaluators": [{"ExactMatch": {"criterion": "ok"}}],
        "judge_repeats": 3,
    }
    checked = engine.run_config_check(
        config, base_dir=str(tmp_path), label="oloproof.yaml", lines={"judge_repeats": 4}
    )
    assert checked.config.judge_repeats == 3


def test_a_run_without_a_model_judge_judges_once_and_says_so() -> None:
    result = engine.run_evaluation(
        system=_answer,
        dataset=ROWS,
        evaluators=[ExactMatch(criterion="right", field="label")],
        store=InMemoryStore(),
        isolation="thread",
        judge_repeats=3,
    )
    assert result.provenance["judging"]["right"]["judged"] == 4
    assert result.metric("right").value_type == "pass_fail"
    assert result.provenance["judge_repeats"]["metrics"] == []
    assert "no evaluator of this run is a model judge: nothing was judged again" in str(result)


def test_a_case_the_system_failed_is_skipped_once_and_missing(models_on: FakeOpenAI) -> None:
    _every_third_fails(models_on)

    def breaks_on_q2(question: dict[str, int]) -> dict[str, str]:
        if question["q"] == 2:
            raise RuntimeError("no answer")
        return _answer(question)

    result = engine.run_evaluation(
        system=breaks_on_q2,
        dataset=ROWS,
        evaluators=[RubricJudge(criterion="polite", rubric="The answer is polite.")],
        store=InMemoryStore(),
        isolation="thread",
        concurrency=1,
        judge_repeats=3,
    )
    assert models_on.request_count == 3 * 3
    assert result.provenance["judging"]["polite"] == {
        "judged": 9,
        "cached": 0,
        "failed": 0,
        "skipped": 1,
    }
    assert result.cases[2].verdicts["polite"].missing
    assert result.metric("polite").n_missing == 1
    assert list(result.provenance["judge_repeats"]["metrics"][0].items())[-2:] == [
        ("outputs", 3),
        ("cases", 3),
    ]
