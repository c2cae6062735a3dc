"""RubricJudge against the fake server: verdicts, feedback, failures, caching and versions."""

from __future__ import annotations

import json

import pytest

from oloproof import ContractError, evaluate, system
from oloproof.evaluators import RubricJudge
from oloproof.models import configure
from oloproof_core.results.store import InMemoryStore
from tests.support.fake_openai import Raw, Reply, Status

ROWS = [
    {
        "id": "polite",
        "input": {"question": "Can I get a refund?"},
        "expected": {"answer": "Yes, within 30 days."},
    },
    {
        "id": "rude",
        "input": {"question": "Where is my parcel?"},
        "expected": {"answer": "It ships tomorrow."},
    },
]
RUBRIC = "The answer is polite and answers the question."


@system(name="bot", version="1")
def bot(case):
    return "Sure, happy to help!" if "refund" in case["question"] else "Figure it out."


def judge_politeness(request):
    if "happy to help" in request.user_text:
        return Reply(json.dumps({"verdict": "PASS", "reason": "Polite and helpful."}))
    return Reply(json.dumps({"verdict": "FAIL", "reason": "Rude; say when it ships."}))


def test_pass_fail_verdicts_with_feedback_and_judge_cost(models_on):
    configure("judge", model="judge-model")
    models_on.respond_with(judge_politeness)

    result = evaluate(
        bot, ROWS, [RubricJudge(criterion="polite", rubric=RUBRIC)], store=InMemoryStore()
    )

    (metric,) = result.metrics
    assert (metric.estimate, metric.n_observed, metric.value_type) == (0.5, 2, "pass_fail")
    feedback = {case.id: case.verdicts["polite"].feedback for case in result.cases}
    assert feedback == {"polite": "Polite and helpful.", "rude": "Rude; say when it ships."}
    assert set(models_on.models_asked()) == {"judge-model"}
    request = models_on.requests[0]
    assert "Rubric:\n" + RUBRIC in request.user_text
    assert "Reference answer" not in request.user_text  # expected is not read by default
    for case in result.cases:
        assert case.cost_usd == 0.0
        assert [call.role for call in case.measurements.model_calls] == ["judge"]


def test_a_second_run_makes_zero_model_calls(models_on):
    models_on.respond_with(judge_politeness)
    store = InMemoryStore()
    judge = RubricJudge(criterion="polite", rubric=RUBRIC)

    first = evaluate(bot, ROWS, [judge], store=store)
    calls_after_first = models_on.request_count
    second = evaluate(bot, ROWS, [RubricJudge(criterion="polite", rubric=RUBRIC)], store=store)

    assert calls_after_first == 2
    assert models_on.request_count == 2
    assert second.provenance["judging"]["polite"] == {
        "judged": 0,
        "cached": 2,
        "failed": 0,
        "skipped": 0,
    }
    assert [c.verdicts["polite"].value for c in second.cases] == [
        c.verdicts["polite"].value for c in first.cases
    ]


def test_the_version_digests_rubric_prompt_and_model(models_on):
    base = RubricJudge(criterion="polite", rubric=RUBRIC)
    assert base.version == RubricJudge(criterion="polite", rubric=RUBRIC).version
    assert base.version != RubricJudge(criterion="polite", rubric=RUBRIC + " ").version
    assert (
        base.version != RubricJudge(criterion="polite", rubric=RUBRIC, with_expected=True).version
    )
    assert base.parameters()["model"] == "default-model"

    configure("judge", model="bigger-judge")
    models_on.respond_with(judge_politeness)
    store = InMemoryStore()
    evaluate(bot, ROWS, [base], store=store)

    assert base.parameters()["model"] == "bigger-judge"
    assert base.version != RubricJudge(criterion="polite", rubric=RUBRIC, role="metric").version


def test_score_judges_and_reference_answers(models_on):
    models_on.respond_with(
        lambda request: Reply(
            "Here you go:\n```json\n"
            + json.dumps({"score": 4, "reason": "Mostly right."})
            + "\n```"
        )
    )
    judge = RubricJudge(
        criterion="quality",
        rubric="Rate the answer.",
        value_type="score",
        score_range=(0, 5),
        with_expected=True,
    )

    result = evaluate(bot, ROWS, [judge], store=InMemoryStore())

    assert result.metrics[0].estimate == 4.0
    assert judge.reads == ("input", "output", "expected")
    assert any(
        'Reference answer:\n{"answer":"Yes, within 30 days."}' in request.user_text
        for request in models_on.requests
    )
    assert '"score": <a number from 0 to 5>' in models_on.requests[0].system_text


@pytest.mark.parametrize(
    ("reply", "reason"),
    [
        (Reply("PASS, looks fine to me"), "judge reply is not the JSON object asked for"),
        (
            Reply('{"verdict": "MAYBE", "reason": "unsure"}'),
            "judge reply has verdict 'MAYBE', not PASS or FAIL",
        ),
        (Raw("<html>gateway error</html>"), "malformed reply from default-model"),
        (Status(401), "Error code: 401"),
    ],
)
def test_a_malformed_or_failed_judge_reply_makes_the_verdict_missing(models_on, reply, reason):
    models_on.respond_with(lambda request: reply)
    store = InMemoryStore()

    result = evaluate(bot, ROWS[:1], [RubricJudge(criterion="polite", rubric=RUBRIC)], store=store)

    verdict = result.cases[0].verdicts["polite"]
    assert verdict.missing
    assert reason in verdict.error
    assert result.metrics[0].n_missing == 1
    assert len(store) == 0  # a failed judgement is never cached


def test_a_score_outside_the_range_is_missing_not_clamped(models_on):
    models_on.respond_with(lambda request: Reply('{"score": 9, "reason": "great"}'))
    result = evaluate(
        bot,
        ROWS[:1],
        [RubricJudge(criterion="q", rubric="Rate it.", value_type="score")],
        store=InMemoryStore(),
    )
    assert "outside its range 0..1" in result.cases[0].verdicts["q"].error


def test_an_empty_rubric_is_refused():
    with pytest.raises(ContractError, match="rubric must be a non-empty string"):
        RubricJudge(criterion="polite", rubric="  ")
