"""The model client over real HTTP: roles, retries, limits, cost attribution, tamper-proofing."""

from __future__ import annotations

import asyncio
import dataclasses

import pytest

from oloproof import current_case, evaluate, system
from oloproof.evaluators import evaluator
from oloproof.models import ModelError, achat, chat, complete, configure, settings_for
from oloproof_core.cases.observations import ModelCall
from skynet import llm
from tests.support.fake_openai import Raw, Reply, Status

ROWS = [{"id": f"case_{i}", "input": {"question": f"question {i}"}} for i in range(4)]


def ask(text="hello", role="system"):
    return chat([{"role": "user", "content": text}], role=role)


def test_a_429_and_a_500_are_retried_until_success(models_on):
    models_on.enqueue(Status(429), Status(500), Reply("fine", 30, 7))

    reply = ask()

    assert (reply.text, reply.attempts) == ("fine", 3)
    assert models_on.request_count == 3
    assert (reply.input_tokens, reply.output_tokens) == (30, 7)
    assert reply.cost_usd == pytest.approx((30 * 1 + 7 * 2) / 1e6)


def test_retries_give_up_after_max_retries_with_a_clear_error(models_on):
    configure("system", max_retries=2)
    models_on.enqueue(Status(503), Status(503), Status(503), Reply("too late"))

    with pytest.raises(ModelError, match="failed after 3 attempts"):
        ask()
    assert models_on.request_count == 3


def test_a_client_error_is_not_retried(models_on):
    models_on.enqueue(Status(400), Reply("never asked"))

    with pytest.raises(ModelError, match="Error code: 400"):
        ask()
    assert models_on.request_count == 1


@pytest.mark.parametrize("body", ["this is not json", '{"unexpected": true}', '{"choices": []}'])
def test_a_malformed_reply_is_a_model_error(models_on, body):
    models_on.enqueue(Raw(body))

    with pytest.raises(ModelError, match="malformed reply from default-model"):
        ask()


def test_no_usage_means_unknown_cost_not_zero(models_on):
    models_on.enqueue(Reply("ok", usage=False))
    reply = ask()
    assert reply.cost_usd is None


def test_roles_fall_back_metric_to_reflection_and_judge_to_metric(models_on):
    assert settings_for("metric").model == "default-model"
    configure("reflection", model="reflector", price_in=3, price_out=4)
    assert (settings_for("metric").model, settings_for("metric").role) == (
        "reflector",
        "reflection",
    )
    assert settings_for("metric").price_in == 3
    assert settings_for("judge").model == "reflector"
    configure("metric", model="metric-model")
    assert settings_for("judge").model == "metric-model"
    assert settings_for("metric").price_in == 1  # its own layer, then the shared default
    assert settings_for("system").model == "default-model"

    assert llm("Say hi.", input="to me") == "OK"
    (request,) = models_on.requests
    assert request.model == "metric-model"
    assert (request.system_text, request.user_text) == ("Say hi.", "to me")


def test_environment_variables_configure_a_role(models_on, monkeypatch):
    monkeypatch.setenv("OLOPROOF_REFLECTION_MODEL", "env-reflector")
    monkeypatch.setenv("OLOPROOF_REFLECTION_PRICE_OUT", "12.5")
    assert settings_for("metric").model == "env-reflector"
    assert settings_for("metric").price_out == 12.5
    monkeypatch.setenv("OLOPROOF_REFLECTION_TIMEOUT", "soon")
    with pytest.raises(
        ModelError,
        match="OLOPROOF_REFLECTION_TIMEOUT: timeout_s must be a positive number, got 'soon'",
    ):
        settings_for("reflection")


def test_no_model_anywhere_says_which_variables_to_set(monkeypatch):
    from oloproof_core.models import reset_configuration

    for name in ("OLOPROOF_DEFAULT_MODEL", "OLOPROOF_METRIC_MODEL", "OLOPROOF_REFLECTION_MODEL"):
        monkeypatch.delenv(name, raising=False)
    reset_configuration()
    with pytest.raises(ModelError, match="set OLOPROOF_METRIC_MODEL or OLOPROOF_REFLECTION_MODEL"):
        settings_for("metric")
    with pytest.raises(ModelError, match="unknown model role 'critic'"):
        configure("critic", model="x")


def test_cost_is_attributed_per_case_and_role(models_on):
    configure("system", model="system-model", price_in=10, price_out=20)
    configure("judge", model="judge-model", price_in=100, price_out=100)
    models_on.respond_with(
        lambda request: Reply(
            "ok", prompt_tokens=int(request.user_text.split()[-1]) * 1000, completion_tokens=10
        )
    )

    @system(name="counting", version="1")
    def counting(case):
        n = int(case["question"].split()[-1])
        for _ in range(n):  # case_i makes i calls of i*1000 input tokens each
            ask(case["question"])
        return "done"

    @evaluator(criterion="judged", reads=("input",), io_bound=True)
    def judged(case):
        chat([{"role": "user", "content": "judge 1"}], role="judge")
        return True

    result = evaluate(counting, ROWS, [judged], concurrency=4)

    for case in result.cases:
        n = int(case.id.split("_")[1])
        expected = n * (n * 1000 * 10 + 10 * 20) / 1e6
        assert case.cost_usd == pytest.approx(expected)
        roles = [call.role for call in case.measurements.model_calls]
        assert roles == ["system"] * n + ["judge"]
        assert case.measurements.cost_for("judge") == pytest.approx((1000 + 10) * 100 / 1e6)
        assert case.to_dict()["cost_usd"] == pytest.approx(expected)


def test_concurrent_requests_stay_within_the_limit(models_on):
    configure("system", model="slow-model", concurrency=2)
    models_on.respond_with(lambda request: Reply("ok", delay_s=0.05))

    @system(name="parallel", version="1")
    def parallel(case):
        return ask(case["question"]).text

    result = evaluate(
        parallel,
        [{"id": f"c{i}", "input": {"question": "q"}} for i in range(8)],
        [evaluator(criterion="ok", reads=("output",))(lambda case: True)],
        concurrency=8,
        # The client's limit holds within one process; across a system's processes it
        # is the metering gateway's to enforce.
        isolation="thread",
    )

    assert all(case.output == "ok" for case in result.cases)
    assert models_on.request_count == 8
    assert models_on.max_in_flight == 2


def test_async_systems_are_measured_through_achat(models_on):
    @system(name="async-bot", version="1")
    async def async_bot(case):
        reply = await achat([{"role": "user", "content": case["question"]}])
        await asyncio.sleep(0)
        return reply.text

    result = evaluate(
        async_bot,
        ROWS[:2],
        [evaluator(criterion="ok", reads=("output",))(lambda case: case.output == "OK")],
    )

    for case in result.cases:
        assert case.cost_usd == pytest.approx((10 * 1 + 5 * 2) / 1e6)


def test_the_system_cannot_change_its_measured_time_or_cost(models_on):
    @system(name="sneaky", version="1")
    def sneaky(case):
        refused = {}
        ask("real work")  # 10 input + 5 output tokens at $1/$2 per million
        me = current_case()
        snapshot = me.measurements
        try:
            snapshot.latency_ms = 0.0
        except dataclasses.FrozenInstanceError:
            refused["latency"] = True
        try:
            snapshot.model_calls[0].cost_usd = 0.0
        except dataclasses.FrozenInstanceError:
            refused["cost"] = True
        try:
            me.record_model_call(
                ModelCall(
                    role="system",
                    model="x",
                    input_tokens=0,
                    output_tokens=0,
                    cost_usd=-1.0,
                    latency_ms=0,
                )
            )
        except Exception as exc:
            refused["negative"] = "non-negative" in str(exc)
        # Asking for another role does not move the call off the system's bill.
        chat([{"role": "user", "content": "hidden"}], role="judge")
        complete("hidden too", role="metric")
        return refused  # what its own process refused it, told back as its output

    # In this process (trusted code), where the case's record is the one the parent keeps:
    # what it exposes must be read-only. In a sandbox the gateway meters (test_metered_calls).
    result = evaluate(
        sneaky,
        ROWS[:1],
        [evaluator(criterion="ok", reads=("output",))(lambda case: True)],
        isolation="thread",
    )

    (case,) = result.cases
    assert case.output == {"latency": True, "cost": True, "negative": True}
    assert case.error is None
    assert case.latency_ms > 0
    assert [call.role for call in case.measurements.model_calls] == ["system"] * 3
    assert case.cost_usd == pytest.approx(3 * (10 * 1 + 5 * 2) / 1e6)
