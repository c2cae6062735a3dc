"""Refused keys, provider errors and unmeasurable calls: relayed as OpenAI would, and recorded."""

from __future__ import annotations

import json
import socket

import httpx
import openai
import pytest

from oloproof_core.execution.gateway import Gateway, Route
from tests.core.execution.gateway.conftest import OPERATOR_KEY
from tests.support.fake_openai import Raw, Reply, Status

BODY = {"model": "m", "messages": [{"role": "user", "content": "hello"}]}


def post(gateway, key, body=BODY):
    return httpx.post(
        f"{gateway.base_url}/chat/completions",
        json=body,
        headers={"Authorization": f"Bearer {key}"},
        timeout=10,
    )


def route(base_url, *, model=None, price=None, timeout_s=5.0):
    return Route(
        role="system",
        base_url=base_url,
        api_key=OPERATOR_KEY,
        model=model,
        price=price,
        timeout_s=timeout_s,
    )


@pytest.mark.parametrize(
    "authorization",
    [None, "Basic b2xvOnByb29m", "Bearer olo-gw-not-issued", f"Bearer {OPERATOR_KEY}"],
)
def test_an_unknown_or_missing_key_is_refused_before_anything_is_forwarded(
    gateway, provider, authorization
):
    headers = {} if authorization is None else {"Authorization": authorization}

    response = httpx.post(f"{gateway.base_url}/chat/completions", json=BODY, headers=headers)

    assert response.status_code == 401
    assert response.json()["error"]["code"] == "invalid_api_key"
    assert provider.request_count == 0
    assert gateway.calls() == []


def test_the_sdk_raises_its_usual_authentication_error(gateway):
    client = openai.OpenAI(base_url=gateway.base_url, api_key="wrong", max_retries=0)

    with pytest.raises(openai.AuthenticationError):
        client.chat.completions.create(model="m", messages=BODY["messages"])


@pytest.mark.parametrize(
    ("code", "error"), [(429, openai.RateLimitError), (500, openai.InternalServerError)]
)
def test_provider_errors_are_relayed_with_their_status_and_recorded(
    gateway, key, provider, code, error
):
    provider.enqueue(Status(code, retry_after=3))
    client = openai.OpenAI(base_url=gateway.base_url, api_key=key, max_retries=0)

    with pytest.raises(error) as raised:
        client.chat.completions.create(model="m", messages=BODY["messages"])

    assert raised.value.status_code == code
    assert raised.value.response.headers["retry-after"] == "3"
    assert raised.value.body["message"] == f"scripted status {code}"
    [call] = gateway.calls("case-1")
    assert (call.status, call.cost_usd, call.input_tokens) == (code, None, None)
    assert not call.ok
    assert f"answered {code}" in call.unmeasured_reason
    assert gateway.totals()["system"].failed_calls == 1


def test_a_provider_that_cannot_be_reached_is_a_502(key_for_route):
    with socket.socket() as free:
        free.bind(("127.0.0.1", 0))
        port = free.getsockname()[1]  # closed again before the call: nothing listens
    gateway, key = key_for_route(route(f"http://127.0.0.1:{port}/v1", model="m", price=(1, 2)))

    response = post(gateway, key)

    assert response.status_code == 502
    assert "could not be reached" in response.json()["error"]["message"]
    [call] = gateway.calls()
    assert (call.status, call.cost_usd) == (502, None)
    assert "could not be reached" in call.unmeasured_reason


def test_a_provider_that_does_not_answer_in_time_is_a_504(key_for_route, provider):
    provider.enqueue(Reply("late", delay_s=2.0))
    gateway, key = key_for_route(route(provider.base_url, model="m", timeout_s=0.2))

    response = post(gateway, key)

    assert response.status_code == 504
    [call] = gateway.calls()
    assert call.status == 504
    assert "did not answer within 0.2 s" in call.unmeasured_reason


def test_no_usage_means_no_cost_and_says_why(gateway, key, provider):
    provider.enqueue(Reply("fine", usage=False))

    assert post(gateway, key).status_code == 200

    [call] = gateway.calls("case-1")
    assert (call.input_tokens, call.output_tokens, call.cost_usd) == (None, None, None)
    assert call.unmeasured_reason == "the provider returned no usage"
    assert gateway.totals()["system"].unmeasured_calls == 1


def test_an_unpinned_role_forwards_the_clients_model_and_prices_it_from_the_table(
    provider, key_for_route
):
    gateway, key = key_for_route(route(provider.base_url), prices={"priced-model": (10, 20)})

    post(gateway, key, {**BODY, "model": "priced-model"})
    post(gateway, key, {**BODY, "model": "unpriced-model"})

    assert provider.models_asked() == ["priced-model", "unpriced-model"]
    priced, unpriced = gateway.calls()
    assert priced.cost_usd == pytest.approx((10 * 10 + 5 * 20) / 1e6)
    assert unpriced.cost_usd is None
    assert unpriced.unmeasured_reason == "no price configured for model unpriced-model"


def test_a_pinned_model_without_a_price_is_unmeasured_with_the_reason(provider, key_for_route):
    gateway, key = key_for_route(route(provider.base_url, model="pinned"))

    post(gateway, key, {**BODY, "model": "something-else"})

    assert provider.models_asked() == ["pinned"]
    [call] = gateway.calls()
    assert call.unmeasured_reason == "no price configured for model pinned"


def test_a_provider_error_quoting_the_operator_key_never_reaches_the_client(gateway, key, provider):
    quoted = {"error": {"message": f"Incorrect API key provided: {OPERATOR_KEY}"}}
    provider.enqueue(Raw(json.dumps(quoted), code=401), Raw(json.dumps(quoted), code=400))

    refused, bad = post(gateway, key), post(gateway, key)

    assert (refused.status_code, bad.status_code) == (401, 400)
    for response in (refused, bad):
        assert OPERATOR_KEY not in response.text
        assert OPERATOR_KEY not in json.dumps(dict(response.headers))
        assert "message" in response.json()["error"]


def test_a_body_that_is_not_json_is_refused(gateway, key, provider):
    response = httpx.post(
        f"{gateway.base_url}/chat/completions",
        content=b"not json",
        headers={"Authorization": f"Bearer {key}"},
    )

    assert response.status_code == 400
    assert provider.request_count == 0


@pytest.fixture
def key_for_route():
    started = []

    def make(one_route, prices=None):
        gateway = Gateway(routes={"system": one_route}, prices=prices).start()
        started.append(gateway)
        return gateway, gateway.issue_key("system", "worker")

    yield make
    for gateway in started:
        gateway.stop()
