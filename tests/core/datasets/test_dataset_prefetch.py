"""A dataset file read ahead (`datasets.prefetch`) is what the run would have read itself:
the same rows, the same error, and the file read again when it changed meanwhile."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from oloproof_core import DatasetError
from oloproof_core.datasets.dataset import load_dataset
from oloproof_core.datasets.prefetch import prefetch_dataset, take_prefetched
from oloproof_core.datasets.rows import Dataset


def _write(path: Path, labels: list[str]) -> None:
    rows = [
        {"id": f"c{i}", "input": {"q": label}, "expected": {"label": label}}
        for i, label in enumerate(labels)
    ]
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")


def test_the_rows_read_ahead_are_the_ones_read_now(tmp_path: Path) -> None:
    path = tmp_path / "cases.jsonl"
    _write(path, ["a", "b", "c"])
    read_ahead: list[Dataset] = []

    def load(name: str) -> Dataset:
        read_ahead.append(load_dataset(name))
        return read_ahead[-1]

    prefetch_dataset(str(path), load)
    taken = load_dataset(str(path))

    assert len(read_ahead) == 1
    assert taken is read_ahead[0]  # the run read nothing itself
    assert taken.digest == load_dataset(str(path)).digest
    assert [row.id for row in taken.rows] == ["c0", "c1", "c2"]
    assert take_prefetched(str(path)) is None  # taken once


def test_a_file_changed_after_it_was_read_ahead_is_read_again(tmp_path: Path) -> None:
    path = tmp_path / "cases.jsonl"
    _write(path, ["a", "b"])
    prefetch_dataset(str(path), load_dataset)
    _write(path, ["a", "b", "c", "d"])
    later = os.stat(path).st_mtime_ns + 1_000_000
    os.utime(path, ns=(later, later))  # a clock too coarse to tell them apart

    assert len(load_dataset(str(path)).rows) == 4


def test_the_error_met_ahead_is_the_runs_own(tmp_path: Path) -> None:
    path = tmp_path / "cases.jsonl"
    path.write_text('{"id": "c0", "input": {}}\nnot json\n', encoding="utf-8")
    prefetch_dataset(str(path), load_dataset)

    with pytest.raises(DatasetError) as ahead:
        load_dataset(str(path))
    with pytest.raises(DatasetError) as now:
        load_dataset(str(path))
    assert str(ahead.value) == str(now.value)
    assert "cases.jsonl:2" in str(ahead.value)


def test_a_split_is_taken_from_the_rows_read_ahead(tmp_path: Path) -> None:
    path = tmp_path / "cases.jsonl"
    rows = [
        {"id": f"c{i}", "input": {"q": i}, "expected": {}, "split": "val" if i % 2 else "train"}
        for i in range(6)
    ]
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    prefetch_dataset(str(path), load_dataset)

    assert [row.id for row in load_dataset(str(path), split="val").rows] == ["c1", "c3", "c5"]
