"""The model client on replies that call tools, on streams, and on a first call's set-up."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from oloproof.models import chat
from tests.support.fake_openai import Reply, tool_call

HELLO = [{"role": "user", "content": "hello"}]
TOOLS = [{"type": "function", "function": {"name": "lookup", "parameters": {"type": "object"}}}]


def test_a_reply_that_only_calls_tools_comes_back_with_its_calls(models_on):
    models_on.enqueue(Reply("", 20, 6, tool_calls=(tool_call("lookup", '{"q": "x"}', "call_9"),)))

    reply = chat(HELLO, tools=TOOLS)

    assert reply.text == ""
    assert reply.tool_calls == (
        {
            "id": "call_9",
            "type": "function",
            "function": {"name": "lookup", "arguments": '{"q": "x"}'},
        },
    )
    assert (reply.input_tokens, reply.output_tokens) == (20, 6)
    assert models_on.requests[0].body["tools"] == TOOLS


def test_a_text_reply_has_no_tool_calls(models_on):
    assert chat(HELLO).tool_calls == ()


def test_a_streamed_reply_is_joined_and_metered(models_on):
    models_on.enqueue(Reply("several words in pieces", 31, 4))

    reply = chat(HELLO, stream=True)

    assert reply.text == "several words in pieces"
    assert (reply.input_tokens, reply.output_tokens) == (31, 4)
    assert reply.cost_usd == pytest.approx((31 * 1 + 4 * 2) / 1e6)
    assert models_on.requests[0].body["stream_options"] == {"include_usage": True}


def test_a_streamed_tool_call_is_assembled(models_on):
    models_on.enqueue(Reply("", 5, 5, tool_calls=(tool_call("lookup", '{"q": 1}'),)))

    reply = chat(HELLO, stream=True, tools=TOOLS)

    assert reply.text == ""
    [call] = reply.tool_calls
    assert (call["function"]["name"], json.loads(call["function"]["arguments"])) == (
        "lookup",
        {"q": 1},
    )


def test_a_stream_without_usage_has_unknown_cost(models_on):
    models_on.enqueue(Reply("fine", usage=False))

    assert chat(HELLO, stream=True).cost_usd is None


def test_prepare_takes_the_clients_import_out_of_the_first_call(models_on):
    """In a fresh interpreter: after prepare() the HTTP client is loaded and the endpoint
    exists; the OpenAI SDK (most of a second to import) is not loaded at all."""
    script = (
        "import sys\n"
        "from oloproof_core.models import prepare\n"
        "assert 'httpx' not in sys.modules\n"
        "prepare()\n"
        "from oloproof_core.models import _client\n"
        "assert 'httpx' in sys.modules\n"
        "assert 'openai' not in sys.modules\n"
        "assert len(_client._clients) == 1\n"
    )
    subprocess.run([sys.executable, "-c", script], check=True, timeout=60)


def test_request_options_shape_the_request_as_the_sdk_takes_them(models_on):
    """`extra_body` joins the body, `extra_headers` the headers; neither is sent as a
    field of its own, and the role's key goes as a bearer token."""
    chat(HELLO, temperature=0, extra_body={"top_k": 5}, extra_headers={"X-Trace": "t1"})

    request = models_on.requests[0]
    assert request.body["temperature"] == 0
    assert request.body["top_k"] == 5
    assert "extra_body" not in request.body
    assert "extra_headers" not in request.body
    headers = {name.lower(): value for name, value in request.headers.items()}
    assert headers["x-trace"] == "t1"
    assert headers["authorization"].startswith("Bearer ")
