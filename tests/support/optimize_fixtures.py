"""The `task_models` fixture: the fake OpenAI server plays the task and the reflection model."""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest

from tests.support.fake_openai import FakeOpenAI
from tests.support.optimize_task import model_environment, serve_task


@pytest.fixture
def task_models(fake_openai: FakeOpenAI, monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeOpenAI]:
    from oloproof_core.models import reset_configuration

    for name in list(os.environ):
        if name.startswith("OLOPROOF_") and name != "OLOPROOF_RECORD":
            monkeypatch.delenv(name)
    for name, value in model_environment(fake_openai.base_url).items():
        monkeypatch.setenv(name, value)
    reset_configuration()
    serve_task(fake_openai)
    yield fake_openai
    reset_configuration()
