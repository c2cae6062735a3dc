"""Fixtures around the fake OpenAI-compatible server, loaded for the whole suite."""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest

from tests.support.fake_openai import FakeOpenAI


@pytest.fixture
def fake_openai() -> Iterator[FakeOpenAI]:
    """A fresh OpenAI-compatible server on 127.0.0.1 for one test."""
    server = FakeOpenAI().start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def models_on(fake_openai: FakeOpenAI, monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeOpenAI]:
    """Every model role pointed at the fake server, with no other model settings around.

    Shared default: model "default-model", $1 per million input and $2 per million
    output tokens, 10 ms first retry delay. Roles can be given their own settings
    with `oloproof.models.configure`; the configuration is reset afterwards.
    """
    from oloproof_core.models import reset_configuration

    for name in list(os.environ):
        if name.startswith("OLOPROOF_") and name != "OLOPROOF_RECORD":
            monkeypatch.delenv(name)
    monkeypatch.setenv("OLOPROOF_DEFAULT_MODEL", "default-model")
    monkeypatch.setenv("OLOPROOF_DEFAULT_BASE_URL", fake_openai.base_url)
    monkeypatch.setenv("OLOPROOF_DEFAULT_PRICE_IN", "1")
    monkeypatch.setenv("OLOPROOF_DEFAULT_PRICE_OUT", "2")
    monkeypatch.setenv("OLOPROOF_DEFAULT_BACKOFF", "0.01")
    reset_configuration()
    yield fake_openai
    reset_configuration()
