"""The real openai SDK, sync and async, through the gateway: answers unchanged, calls metered."""

from __future__ import annotations

import asyncio
import json

import openai
import pytest

from tests.core.execution.gateway.conftest import OPERATOR_KEY, cost
from tests.support.fake_openai import Reply, tool_call

HELLO = [{"role": "user", "content": "hello"}]


def sdk(gateway, key):
    return openai.OpenAI(base_url=gateway.base_url, api_key=key, max_retries=0)


def test_a_sync_call_is_answered_and_metered_on_its_case(gateway, key, provider):
    provider.enqueue(Reply("hi there", 30, 7, model="default-model-2024-08-06"))

    reply = sdk(gateway, key).chat.completions.create(model="gpt-anything", messages=HELLO)

    assert reply.choices[0].message.content == "hi there"
    assert (reply.usage.prompt_tokens, reply.usage.completion_tokens) == (30, 7)
    [call] = gateway.take_calls("case-1")
    assert (call.role, call.model, call.case_id, call.status) == (
        "system",
        "default-model-2024-08-06",
        "case-1",
        200,
    )
    assert (call.input_tokens, call.output_tokens, call.streamed) == (30, 7, False)
    assert call.cost_usd == pytest.approx(cost(30, 7))
    assert call.unmeasured_reason is None
    assert call.latency_ms > 0
    assert gateway.calls("case-1") == []
    assert gateway.totals()["system"].cost_usd == pytest.approx(cost(30, 7))


def test_the_pinned_model_and_the_operator_key_go_upstream(gateway, key, provider):
    sdk(gateway, key).chat.completions.create(model="gpt-anything", messages=HELLO)

    [request] = provider.requests
    assert request.model == "default-model"
    assert request.headers["Authorization"] == f"Bearer {OPERATOR_KEY}"
    assert key not in json.dumps(request.headers)


def test_the_client_never_sees_the_provider_key(gateway, key, provider):
    client = sdk(gateway, key)
    raw = client.chat.completions.with_raw_response.create(model="m", messages=HELLO)

    seen = raw.http_response.text + json.dumps(dict(raw.http_response.headers))
    assert OPERATOR_KEY not in seen
    assert raw.parse().choices[0].message.content == "OK"


def test_tool_calls_and_json_mode_pass_through_untouched(gateway, key, provider):
    tools = [
        {
            "type": "function",
            "function": {
                "name": "get_weather",
                "description": "Weather for a city",
                "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
            },
        }
    ]
    provider.enqueue(Reply("", 12, 9, tool_calls=(tool_call("get_weather", '{"city": "Oslo"}'),)))

    reply = sdk(gateway, key).chat.completions.create(
        model="m", messages=HELLO, tools=tools, response_format={"type": "json_object"}, n=2
    )

    message = reply.choices[0].message
    assert message.content is None
    assert message.tool_calls[0].function.name == "get_weather"
    assert json.loads(message.tool_calls[0].function.arguments) == {"city": "Oslo"}
    body = provider.requests[0].body
    assert (body["tools"], body["response_format"], body["n"]) == (
        tools,
        {"type": "json_object"},
        2,
    )
    [call] = gateway.calls("case-1")
    assert (call.input_tokens, call.output_tokens) == (12, 9)


def test_a_stream_is_relayed_and_metered_without_showing_usage_it_did_not_ask_for(
    gateway, key, provider
):
    provider.enqueue(Reply("the quick brown fox", 21, 4))

    chunks = list(sdk(gateway, key).chat.completions.create(model="m", messages=HELLO, stream=True))

    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    assert text == "the quick brown fox"
    assert all(chunk.usage is None for chunk in chunks)
    assert all(chunk.choices for chunk in chunks)
    assert provider.requests[0].body["stream_options"] == {"include_usage": True}
    [call] = gateway.calls("case-1")
    assert (call.streamed, call.input_tokens, call.output_tokens) == (True, 21, 4)
    assert call.cost_usd == pytest.approx(cost(21, 4))


def test_a_stream_that_asks_for_usage_gets_it(gateway, key, provider):
    provider.enqueue(Reply("one two", 8, 2))

    chunks = list(
        sdk(gateway, key).chat.completions.create(
            model="m", messages=HELLO, stream=True, stream_options={"include_usage": True}
        )
    )

    assert chunks[-1].choices == []
    assert (chunks[-1].usage.prompt_tokens, chunks[-1].usage.completion_tokens) == (8, 2)
    [call] = gateway.calls("case-1")
    assert (call.input_tokens, call.output_tokens) == (8, 2)


def test_concurrent_async_calls_each_belong_to_their_keys_case_whatever_they_claim(
    gateway, provider
):
    cases = [f"case-{i}" for i in range(6)]
    case_keys = []
    for i, case_id in enumerate(cases):
        case_keys.append(gateway.bind(gateway.issue_key("system", f"worker-{i}"), case_id))
    # Each case's reply has its own token counts, so a mix-up shows.
    provider.respond_with(
        lambda request: Reply("ok", 100 + int(request.user_text), 1, delay_s=0.05)
    )

    async def ask(i, case_key):
        client = openai.AsyncOpenAI(base_url=gateway.base_url, api_key=case_key, max_retries=0)
        async with client:
            await client.chat.completions.create(
                model="m",
                messages=[{"role": "user", "content": str(i)}],
                extra_headers={"X-Oloproof-Case": "case-0"},  # a claim: it decides nothing
            )

    async def run_all():
        await asyncio.gather(*(ask(i, case_key) for i, case_key in enumerate(case_keys)))

    asyncio.run(run_all())

    for i, case_id in enumerate(cases):
        [call] = gateway.take_calls(case_id)
        assert call.input_tokens == 100 + i
    assert provider.max_in_flight > 1  # they really were concurrent
    assert gateway.totals()["system"].calls == len(cases)


def test_embeddings_pass_through_and_cost_input_tokens_only(gateway, key, provider):
    provider.enqueue(Reply("", 40, 0))

    reply = sdk(gateway, key).embeddings.create(model="m", input="a sentence")

    assert reply.data[0].embedding == [0.1, 0.2, 0.3]
    [call] = gateway.calls("case-1")
    assert (call.endpoint, call.input_tokens, call.output_tokens) == ("/embeddings", 40, 0)
    assert call.cost_usd == pytest.approx(cost(40, 0))


def test_models_lists_the_model_the_role_is_pinned_to(gateway, key):
    listed = sdk(gateway, key).models.list()

    assert [model.id for model in listed.data] == ["default-model"]
