"""Engine tests: no database, no server; every run uses its own in-memory store."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from oloproof_core.results.store import InMemoryStore


def write_example_dataset(path: Path, n_refund: int = 15, n_other: int = 15) -> Path:
    """The seed page's dataset shape: refund questions and other questions."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8") as handle:
        for i in range(n_refund):
            handle.write(
                json.dumps(
                    {
                        "id": f"refund_{i:02d}",
                        "input": {"question": f"Can I get a refund? #{i}"},
                        "expected": {"label": "refund"},
                    }
                )
                + "\n"
            )
        for i in range(n_other):
            handle.write(
                json.dumps(
                    {
                        "id": f"other_{i:02d}",
                        "input": {"question": f"Where is my parcel? #{i}"},
                        "expected": {"label": "other"},
                    }
                )
                + "\n"
            )
    return path


@pytest.fixture
def example_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A working directory holding data/example.jsonl with 30 cases, as in the seed."""
    write_example_dataset(tmp_path / "data" / "example.jsonl")
    monkeypatch.chdir(tmp_path)
    return tmp_path


@pytest.fixture
def store() -> InMemoryStore:
    return InMemoryStore()
