"""The metric contract page's four examples, as files, run through `oloproof.evaluate`."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from oloproof import evaluate, system
from oloproof.evaluators import MetricFile
from oloproof.models import chat, configure
from oloproof_core.cases.rewards import half_at_reference
from tests.support.fake_openai import Reply

SEED_METRICS = Path(__file__).parent / "seed_metrics"

LABEL_ROWS = [
    {
        "id": "refund_0",
        "input": {"question": "Can I get a refund?"},
        "expected": {"label": "refund"},
    },
    {
        "id": "refund_1",
        "input": {"question": "I want a refund for my order"},
        "expected": {"label": "refund"},
    },
    {"id": "other_0", "input": {"question": "Where is my parcel?"}, "expected": {"label": "other"}},
    {
        "id": "other_1",
        "input": {"question": "Refund policy for parcels?"},
        "expected": {"label": "other"},
    },
]


@system(name="label-bot", version="1")
def label_bot(case):
    return "refund" if "refund" in case["question"].lower() else "other"


# At the top of the module, so they run in processes of their own: speed and cost earn
# credit only where the platform measured them out of the system's reach.
@system(name="paid-bot", version="1")
def paid_bot(case):
    chat([{"role": "user", "content": case["question"]}])
    time.sleep(0.02)
    return "refund" if "refund" in case["question"].lower() else "other"


@system(name="unpriced-bot", version="1")
def unpriced_bot(case):
    chat([{"role": "user", "content": case["question"]}])
    return "refund"


def metric_named(result, name):
    return next(metric for metric in result.metrics if metric.metric == name)


def verdicts(result, criterion):
    return {case.id: case.verdicts[criterion] for case in result.cases}


def test_exact_match_scores_and_explains_each_case(store):
    result = evaluate(
        label_bot, LABEL_ROWS, [MetricFile(SEED_METRICS / "exact_match" / "metric.py")], store=store
    )

    metric = metric_named(result, "exact_match")
    assert (metric.estimate, metric.n_observed, metric.n_missing) == (0.75, 4, 0)
    assert metric.value_type == "score"
    by_case = verdicts(result, "exact_match")
    assert by_case["refund_0"].feedback == "Correct."
    assert by_case["other_1"].value == 0.0
    assert by_case["other_1"].feedback == "Expected 'other', got 'refund'."


def test_multiple_checks_turn_sub_scores_into_their_own_metrics(store):
    rows = [
        {
            "id": "all",
            "input": {"text": '{"name": "Ada", "date": "1843"}'},
            "expected": {"fields": ["name", "date"]},
        },
        {
            "id": "half",
            "input": {"text": '{"name": "Ada"}'},
            "expected": {"fields": ["name", "date"]},
        },
        {"id": "broken", "input": {"text": "{name: Ada"}, "expected": {"fields": ["name", "date"]}},
    ]

    @system(name="echo", version="1")
    def echo(case):
        return case["text"]

    result = evaluate(
        echo, rows, [MetricFile(SEED_METRICS / "multiple_checks" / "metric.py")], store=store
    )

    names = [metric.metric for metric in result.metrics]
    assert names == ["multiple_checks", "multiple_checks.format", "multiple_checks.fields"]
    assert metric_named(result, "multiple_checks").estimate == pytest.approx((1 + 0.75 + 0) / 3)
    assert metric_named(result, "multiple_checks.format").estimate == pytest.approx(2 / 3)
    assert metric_named(result, "multiple_checks.fields").estimate == pytest.approx(0.5)
    assert metric_named(result, "multiple_checks.fields").interval.lower < 0.5
    by_case = verdicts(result, "multiple_checks")
    assert by_case["all"].feedback == "All fields present."
    assert by_case["half"].feedback == "Missing fields: date."
    assert by_case["half"].scores == {"format": 1.0, "fields": 0.5}
    assert by_case["broken"].feedback.startswith("Output is not valid JSON: ")


def test_model_as_judge_uses_the_reflection_model_when_no_metric_model_is_set(models_on, store):
    configure("reflection", model="reflection-model")
    models_on.respond_with(
        lambda request: Reply(
            "PASS. The answer names the right label."
            if "Answer: refund" in request.user_text
            else "FAIL. A refund question needs the label refund.",
            prompt_tokens=100,
            completion_tokens=20,
        )
    )

    result = evaluate(
        label_bot, LABEL_ROWS, [MetricFile(SEED_METRICS / "model_judge" / "metric.py")], store=store
    )

    assert metric_named(result, "model_judge").estimate == 0.75
    assert set(models_on.models_asked()) == {"reflection-model"}
    first = models_on.requests[0]
    assert first.system_text == "Answer PASS or FAIL, then give one sentence of reasons."
    assert first.user_text.startswith("Question: ")
    by_case = verdicts(result, "model_judge")
    assert by_case["other_0"].feedback == "FAIL. A refund question needs the label refund."
    for case in result.cases:  # the judge's calls are the metric's, never the system's
        (call,) = case.measurements.model_calls
        assert (call.role, call.model, call.input_tokens) == ("metric", "reflection-model", 100)
        assert case.cost_usd == 0.0
        assert case.measurements.cost_for("metric") == pytest.approx((100 * 1 + 20 * 2) / 1e6)


def test_a_configured_metric_model_wins_over_the_reflection_model(models_on, store):
    configure("reflection", model="reflection-model")
    configure("metric", model="metric-model")
    models_on.respond_with(lambda request: Reply("PASS. Fine."))

    evaluate(
        label_bot, LABEL_ROWS, [MetricFile(SEED_METRICS / "model_judge" / "metric.py")], store=store
    )

    assert set(models_on.models_asked()) == {"metric-model"}


def test_accuracy_speed_and_cost_from_measured_figures(models_on, store):
    configure("system", model="system-model", price_in=2.0, price_out=8.0)
    models_on.respond_with(lambda request: Reply("ok", prompt_tokens=1000, completion_tokens=250))

    result = evaluate(
        paid_bot,
        LABEL_ROWS,
        [MetricFile(SEED_METRICS / "accuracy_speed_cost" / "metric.py")],
        store=store,
        concurrency=2,
    )

    names = [metric.metric for metric in result.metrics]
    assert names == [
        "accuracy_speed_cost",
        "accuracy_speed_cost.accuracy",
        "accuracy_speed_cost.speed",
        "accuracy_speed_cost.cost",
    ]
    per_call_cost = (1000 * 2.0 + 250 * 8.0) / 1e6
    for case in result.cases:
        verdict = case.verdicts["accuracy_speed_cost"]
        assert case.cost_usd == pytest.approx(per_call_cost)
        assert case.latency_ms >= 20
        speed = half_at_reference(case.latency_ms, 2000)
        cost = half_at_reference(per_call_cost, 0.01)
        accuracy = 0.0 if case.id == "other_1" else 1.0
        assert verdict.scores == pytest.approx({"accuracy": accuracy, "speed": speed, "cost": cost})
        assert verdict.value == pytest.approx(0.7 * accuracy + 0.2 * speed + 0.1 * cost)
        assert verdict.feedback == ("Correct." if accuracy else "Wrong label.")
    assert metric_named(result, "accuracy_speed_cost.accuracy").estimate == 0.75


def test_unpriced_model_calls_make_cost_score_zero_and_the_feedback_says_so(
    models_on, store, monkeypatch
):
    monkeypatch.delenv("OLOPROOF_DEFAULT_PRICE_IN")
    monkeypatch.delenv("OLOPROOF_DEFAULT_PRICE_OUT")

    result = evaluate(
        unpriced_bot,
        LABEL_ROWS[:1],
        [MetricFile(SEED_METRICS / "accuracy_speed_cost" / "metric.py")],
        store=store,
    )

    (case,) = result.cases
    verdict = case.verdicts["accuracy_speed_cost"]
    assert case.cost_usd is None
    assert verdict.scores["cost"] == 0.0
    assert verdict.feedback == (
        "Correct. Cost could not be measured (a model call had no price), so it scored 0."
    )
    speed = verdict.scores["speed"]
    assert verdict.value == pytest.approx(0.7 + 0.2 * speed)


def test_reward_metric_verdicts_follow_the_measurements_not_a_stale_cache(store):
    metric = MetricFile(SEED_METRICS / "accuracy_speed_cost" / "metric.py")
    assert "measurements" in metric.reads

    first = evaluate(label_bot, LABEL_ROWS, [metric], store=store)
    second = evaluate(label_bot, LABEL_ROWS, [metric], store=store)

    judging = second.provenance["judging"]["accuracy_speed_cost"]
    assert judging["judged"] + judging["cached"] == 4
    for before, after in zip(first.cases, second.cases, strict=True):
        verdict = after.verdicts["accuracy_speed_cost"]
        assert verdict.scores["speed"] == pytest.approx(half_at_reference(after.latency_ms, 2000))
        if after.latency_ms != before.latency_ms:
            assert not verdict.cached


def test_feedback_and_sub_scores_survive_the_result_json(store, tmp_path):
    from oloproof_core.results.reading import load_result

    result = evaluate(
        label_bot,
        LABEL_ROWS[:2],
        [MetricFile(SEED_METRICS / "multiple_checks" / "metric.py")],
        store=store,
    )
    path = tmp_path / "result.json"
    path.write_text(json.dumps(result.to_dict()), encoding="utf-8")

    loaded = load_result(str(path))
    verdict = loaded.cases[0].verdicts["multiple_checks"]
    assert verdict.scores == {"format": 0.0, "fields": 0.0}
    assert verdict.feedback.startswith("Output is not valid JSON")
