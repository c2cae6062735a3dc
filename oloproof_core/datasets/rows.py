"""A dataset's rows as the engine holds them: what the loader makes and every stage reads.

Kept apart from the loader so the row checks and every reader import the data alone.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(slots=True)
class Row:
    """One case of a dataset, with the digests of its parts computed at load time."""

    id: str
    input: dict[str, Any]
    expected: dict[str, Any] | None = None
    split: str | None = None
    cluster: str | None = None
    input_digest: str = ""
    expected_digest: str = ""
    repeat: int = 0
    """Which of a case's repeated runs this row is (1, 2, ...); 0 in a run without repeats."""
    refused: str | None = None
    """Why this row's case is missing without being run (its workspace files leave the
    workspace, say), naming the file and line; None for a row that runs."""


@dataclass(slots=True)
class Dataset:
    source: str
    rows: list[Row]
    digest: str
    split: str | None = None
    splits: dict[str, int] = field(default_factory=dict)
    unrepeated_digest: str = ""
    """For a dataset whose rows are another's repeated (`evaluation/repeats.py`), that
    dataset's digest: runs of one dataset at different repeat counts share it."""

    def __len__(self) -> int:
        return len(self.rows)
