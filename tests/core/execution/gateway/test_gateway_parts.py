"""The gateway's parts on their own: routes from settings, and the stream meter."""

from __future__ import annotations

import json

import httpx

from oloproof.models import configure
from oloproof_core.execution.gateway import Route
from oloproof_core.execution.gateway._usage import StreamMeter


def event(payload):
    return f"data: {json.dumps(payload)}\n\n".encode()


CONTENT = {"model": "m-2024", "choices": [{"index": 0, "delta": {"content": "hi"}}]}
USAGE = {"model": "m-2024", "choices": [], "usage": {"prompt_tokens": 3, "completion_tokens": 1}}


def test_a_role_with_a_model_is_pinned_and_priced(provider):
    configure("judge", model="judge-model", price_in=5, price_out=6)

    route = Route.from_settings("judge")

    assert (route.model, route.price, route.base_url) == (
        "judge-model",
        (5, 6),
        provider.base_url,
    )


def test_a_role_without_a_model_forwards_the_clients_and_has_no_price(provider, monkeypatch):
    monkeypatch.delenv("OLOPROOF_DEFAULT_MODEL")

    route = Route.from_settings("system")

    assert (route.model, route.price, route.base_url) == (None, None, provider.base_url)
    assert route.api_key is not None


def test_the_meter_drops_the_usage_chunk_the_client_did_not_ask_for():
    meter = StreamMeter(client_wants_usage=False)

    relayed = meter.feed(event(CONTENT) + event(USAGE) + b"data: [DONE]\n\n")

    assert relayed == event(CONTENT)
    assert meter.flush() == b"data: [DONE]\n\n"
    assert (meter.tokens, meter.model) == ((3, 1), "m-2024")


def test_the_meter_removes_usage_riding_on_a_content_chunk():
    meter = StreamMeter(client_wants_usage=False)

    relayed = meter.feed(event({**CONTENT, "usage": USAGE["usage"]}))

    assert json.loads(relayed.decode().removeprefix("data: ")) == CONTENT
    assert meter.tokens == (3, 1)


def test_the_meter_relays_everything_when_the_client_asked_and_events_split_anywhere():
    meter = StreamMeter(client_wants_usage=True)
    stream = event(CONTENT).replace(b"\n\n", b"\r\n\r\n") + event(USAGE) + b": keep-alive\n\n"

    relayed = b"".join(meter.feed(stream[i : i + 7]) for i in range(0, len(stream), 7))

    assert relayed + meter.flush() == stream
    assert meter.tokens == (3, 1)


def test_a_gateway_call_becomes_the_engines_model_call(gateway, key):

    body = {"model": "m", "messages": [{"role": "user", "content": "hi"}]}
    headers = {"Authorization": f"Bearer {key}"}
    httpx.post(f"{gateway.base_url}/chat/completions", json=body, headers=headers)

    [call] = gateway.calls("case-1")
    recorded = call.as_model_call()
    assert (recorded.role, recorded.model, recorded.input_tokens, recorded.output_tokens) == (
        "system",
        "default-model",
        10,
        5,
    )
    assert (recorded.cost_usd, recorded.latency_ms) == (call.cost_usd, call.latency_ms)
