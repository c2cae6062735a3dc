"""A gateway in front of the fake provider, with the operator's key only on the gateway side.

Every role is pinned to "default-model" at $1 / $2 per million input / output tokens
(the `models_on` settings) and the operator's provider key is OPERATOR_KEY.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from oloproof_core.execution.gateway import Gateway
from tests.support.fake_openai import FakeOpenAI

OPERATOR_KEY = "sk-operator-only-9f8e7d6c5b4a"


def cost(input_tokens: int, output_tokens: int) -> float:
    return (input_tokens * 1 + output_tokens * 2) / 1e6


@pytest.fixture
def provider(models_on: FakeOpenAI, monkeypatch: pytest.MonkeyPatch) -> FakeOpenAI:
    monkeypatch.setenv("OLOPROOF_DEFAULT_API_KEY", OPERATOR_KEY)
    return models_on


@pytest.fixture
def gateway(provider: FakeOpenAI) -> Iterator[Gateway]:
    with Gateway() as gateway:
        yield gateway


@pytest.fixture
def key(gateway: Gateway) -> str:
    """A system key bound to case "case-1"."""
    key = gateway.issue_key("system", "worker-1")
    gateway.bind(key, "case-1")
    return key
