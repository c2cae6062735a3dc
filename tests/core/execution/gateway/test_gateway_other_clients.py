"""Clients that know nothing of oloproof, unchanged: plain httpx, LiteLLM and DSPy."""

from __future__ import annotations

import os

import httpx
import pytest

from tests.core.execution.gateway.conftest import cost
from tests.support.fake_openai import Reply

# LiteLLM fetches a price list from the network on import unless told to use its own.
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
# LiteLLM's own types make pydantic warn on import; nothing to do with the gateway.
pytestmark = pytest.mark.filterwarnings("ignore:Items? .*ReadOnly:UserWarning")


def test_plain_httpx_with_a_stream(gateway, key, provider):
    provider.enqueue(Reply("a b c", 6, 3))
    body = {"model": "m", "messages": [{"role": "user", "content": "hi"}], "stream": True}

    with httpx.stream(
        "POST",
        f"{gateway.base_url}/chat/completions",
        json=body,
        headers={"Authorization": f"Bearer {key}"},
    ) as response:
        assert response.headers["content-type"].startswith("text/event-stream")
        lines = [line for line in response.iter_lines() if line]

    assert lines[-1] == "data: [DONE]"
    assert all('"usage"' not in line for line in lines)
    [call] = gateway.calls("case-1")
    assert (call.streamed, call.input_tokens, call.output_tokens) == (True, 6, 3)


def test_litellm_completion(gateway, key, provider):
    litellm = pytest.importorskip("litellm")
    provider.enqueue(Reply("from litellm", 17, 3))

    reply = litellm.completion(
        model="openai/any-name",
        api_base=gateway.base_url,
        api_key=key,
        messages=[{"role": "user", "content": "hi"}],
    )

    assert reply.choices[0].message.content == "from litellm"
    [call] = gateway.calls("case-1")
    assert (call.input_tokens, call.output_tokens) == (17, 3)
    assert call.cost_usd == pytest.approx(cost(17, 3))


def test_dspy_lm(gateway, key, provider):
    dspy = pytest.importorskip("dspy")
    provider.enqueue(Reply("from dspy", 11, 2))

    lm = dspy.LM("openai/any-name", api_base=gateway.base_url, api_key=key, cache=False)

    assert lm("hi") == ["from dspy"]
    [call] = gateway.calls("case-1")
    assert (call.input_tokens, call.output_tokens) == (11, 2)
