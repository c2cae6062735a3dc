"""Metric-file tests: seed examples on disk, metric files written per test."""

from __future__ import annotations

import textwrap
from collections.abc import Callable
from pathlib import Path

import pytest

from oloproof_core.results.store import InMemoryStore


@pytest.fixture
def store() -> InMemoryStore:
    return InMemoryStore()


@pytest.fixture
def write_metric(tmp_path: Path) -> Callable[..., Path]:
    """Write a metric file from (dedented) source and return its path."""

    def write(source: str, name: str = "metric.py") -> Path:
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(source), encoding="utf-8")
        return path

    return write
