"""Model calls from a system's own process are metered by the gateway, whatever the client."""

from __future__ import annotations

import pytest

from oloproof import evaluate
from oloproof.evaluators import Contains
from oloproof_core import InMemoryStore
from tests.core.execution.isolation import metered_systems as systems
from tests.core.execution.isolation.late_sdk_systems import late_sdk
from tests.core.execution.isolation.raw_http_systems import raw_http
from tests.support.fake_openai import FakeOpenAI, Reply, tool_call

ROWS = [{"id": f"q{i}", "input": {"question": f"question {i}"}} for i in range(4)]
PER_CALL = (10 * 1 + 5 * 2) / 1e6
"""Cost of one call at the fake server's usage (10 in, 5 out) and $1 / $2 per million."""


def run(target, rows=ROWS, **options):
    return evaluate(
        target,
        rows,
        [Contains(criterion="answered", value="a")],
        store=InMemoryStore(),
        record=False,
        **options,
    )


def _system_calls(case):
    return [call for call in case.measurements.model_calls if call.role == "system"]


@pytest.mark.parametrize(
    "target", [systems.sdk_plain, systems.sdk_stream, systems.sdk_async, systems.threaded]
)
def test_each_case_is_charged_its_own_calls(
    models_on: FakeOpenAI, target, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OLOPROOF_DEFAULT_API_KEY", "sk-operator")
    models_on.respond_with(lambda request: Reply("an answer"))
    result = run(target)
    execution = result.provenance["execution"]
    assert execution["model_cost"] == "metered by oloproof's model gateway"
    # The processes load the SDK, so the gateway serves before any case is timed.
    assert execution["model_gateway"].startswith("started before the first case"), execution
    for case in result.cases:
        assert case.error is None, case.error
        (call,) = _system_calls(case)
        assert (call.input_tokens, call.output_tokens) == (10, 5)
        assert case.cost_usd == pytest.approx(PER_CALL)
    assert result.usage()["system"].calls == len(ROWS)
    # The provider saw the operator's key; the system's process only ever had the gateway's.
    seen = {
        value
        for request in models_on.requests
        for name, value in request.headers.items()
        if name.lower() == "authorization"
    }
    assert seen == {"Bearer sk-operator"}


def test_a_system_without_a_model_client_is_metered_from_its_first_call(
    models_on: FakeOpenAI,
) -> None:
    models_on.respond_with(lambda request: Reply("an answer"))
    result = run(raw_http)
    for case in result.cases:
        assert case.error is None, case.error
        assert case.output == {"text": "an answer"}
        assert case.cost_usd == pytest.approx(PER_CALL)
    assert result.usage()["system"].calls == len(ROWS)
    started = result.provenance["execution"]["model_gateway"]
    assert started.startswith("started by the first model call, during the cases"), started


def test_a_gateway_that_cannot_start_on_the_first_call_fails_the_calls_and_says_why(
    models_on: FakeOpenAI, monkeypatch: pytest.MonkeyPatch
) -> None:
    models_on.respond_with(lambda request: Reply("an answer"))
    monkeypatch.setenv("OLOPROOF_DEFAULT_PRICE_IN", "abc")  # read when the gateway serves
    result = run(raw_http)
    assert all(case.error is not None for case in result.cases)  # refused, not hung
    started = result.provenance["execution"]["model_gateway"]
    assert started.startswith("could not start on the first model call"), started
    assert "price_in must be a non-negative number, got 'abc'" in started
    assert models_on.requests == []


def test_an_async_system_that_loads_its_client_in_a_case_is_charged_per_case(
    models_on: FakeOpenAI,
) -> None:
    rows = [{"id": f"q{i}", "input": {"question": f"question {i}"}} for i in range(12)]
    models_on.respond_with(lambda request: Reply("an answer", delay_s=0.05))
    result = run(late_sdk, rows=rows, concurrency=6)
    for case in result.cases:
        assert case.error is None, case.error
        assert len(_system_calls(case)) == 1  # its own call, with five others in flight
    assert result.usage()["system"].calls == len(rows)
    assert "unattributed_model_calls" not in result.provenance["execution"]


def test_tool_calls_pass_through_and_are_metered(models_on: FakeOpenAI) -> None:
    models_on.respond_with(lambda request: Reply("", tool_calls=(tool_call("lookup", "{}"),)))
    result = run(systems.sdk_tools)
    assert all(case.output == {"tools": ["lookup"]} for case in result.cases)
    assert all(case.cost_usd == pytest.approx(PER_CALL) for case in result.cases)


def test_a_system_cannot_lower_its_own_cost(models_on: FakeOpenAI) -> None:
    models_on.respond_with(lambda request: Reply("an answer"))
    result = run(systems.cost_cheat)
    for case in result.cases:
        assert case.error is None, case.error
        assert case.cost_usd == pytest.approx(PER_CALL)


def test_thread_isolation_says_its_cost_is_not_protected(models_on: FakeOpenAI) -> None:
    models_on.respond_with(lambda request: Reply("an answer"))
    result = run(systems.cost_cheat, isolation="thread")
    assert result.provenance["execution"]["measurements"] == "not protected"
