"""Datasets: rows of `{"id", "input", "expected"}` read from JSONL, JSON, CSV or Python.

Rows are validated as they stream in; the first bad row stops the load with an
error naming the file, the line and what to change. The dataset digest is a
SHA-256 over the canonical form of every row in order, so it identifies the
content, not the file name or its formatting.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import Any

from oloproof_core._util.canonical import canonical_json
from oloproof_core.datasets.checks import check_row_limits
from oloproof_core.datasets.conversations import conversation_problem
from oloproof_core.datasets.prefetch import take_prefetched
from oloproof_core.datasets.readers import ROW_KEYS, read_records
from oloproof_core.datasets.rows import Dataset, Row
from oloproof_core.datasets.workspace_files import FILES_KEY, FOLDER_KEY, workspace_input
from oloproof_core.errors import DatasetError

_ROW_KEYS_TEXT = ", ".join(sorted(ROW_KEYS))


def load_dataset(
    source: str | os.PathLike[str] | Sequence[Mapping[str, Any]] | Dataset,
    *,
    split: str | None = None,
) -> Dataset:
    """Load and validate a dataset from a path (.jsonl/.ndjson, .json, .csv) or a list of dicts."""
    if isinstance(source, Dataset):
        return source if split is None or split == source.split else _select_split(source, split)
    if isinstance(source, (str, os.PathLike)):
        path = os.fspath(source)
        prefetched = take_prefetched(path)
        if prefetched is not None:
            return _select_split(prefetched, split) if split is not None else prefetched
        records = read_records(path)
        label = path
    elif isinstance(source, Sequence):
        records = ((index, item) for index, item in enumerate(source, start=1))
        label = "<list>"
    else:
        raise DatasetError(
            repr(source)[:60],
            None,
            "a dataset is a path to a .jsonl, .json or .csv file, or a list of dicts",
        )
    dataset = _build(label, records)
    return _select_split(dataset, split) if split is not None else dataset


def _canonical_part(source: str, line: int, part: str, value: Any) -> bytes:
    try:
        return canonical_json(value).encode()
    except ValueError:
        raise DatasetError(
            source,
            line,
            f"{part!r} holds NaN or Infinity, which JSON data cannot hold (and no interval "
            "can be computed from); write null for a missing value, or a finite number",
        ) from None
    except TypeError as exc:
        raise DatasetError(
            source,
            line,
            f"{part!r} is not JSON data ({exc}); use dicts, lists, strings, "
            "numbers, booleans or null",
        ) from None


def _build(source: str, records: Iterable[tuple[int, Any]]) -> Dataset:
    first_line: dict[str, int] = {}

    def seen(row_id: str, line: int) -> None:
        if row_id in first_line:
            raise duplicate_id_error(source, line, row_id, first_line[row_id])
        first_line[row_id] = line

    hasher = hashlib.sha256()
    rows = [row for _, row in checked_rows(source, records, hasher, seen)]
    if not rows:
        raise DatasetError(source, None, "the dataset has no rows")
    splits: dict[str, int] = {}
    for row in rows:
        if row.split is not None:
            splits[row.split] = splits.get(row.split, 0) + 1
    return Dataset(source=source, rows=rows, digest=hasher.hexdigest(), splits=splits)


def checked_rows(
    source: str,
    records: Iterable[tuple[int, Any]],
    hasher: Any,
    seen: Callable[[str, int], None],
) -> Iterator[tuple[int, Row]]:
    """Each record as a checked Row with its line, its content added to `hasher` (the
    dataset's digest); `seen(id, line)` is told each id in turn, and may refuse it."""
    for line, item in records:
        row = _validate(source, line, item)
        if FILES_KEY in row.input or FOLDER_KEY in row.input:
            row.input, row.refused = workspace_input(source, line, row.id, row.input)
        check_row_limits(source, line, row)
        problem = conversation_problem(row.input, row.expected)
        if problem is not None:
            raise DatasetError(source, line, f"row {row.id!r}: {problem}")
        seen(row.id, line)
        input_bytes = _canonical_part(source, line, "input", row.input)
        expected_bytes = _canonical_part(source, line, "expected", row.expected)
        row.input_digest = hashlib.sha256(input_bytes).hexdigest()
        row.expected_digest = hashlib.sha256(expected_bytes).hexdigest()
        # JSON texts delimit themselves and the labels are length-prefixed, so one
        # update per row keeps the digest unambiguous.
        hasher.update(_labels_text(row).encode() + input_bytes + expected_bytes)
        yield line, row


def duplicate_id_error(source: str, line: int, row_id: str, first: int) -> DatasetError:
    return DatasetError(
        source, line, f"duplicate id {row_id!r} (first on line {first}); ids must be unique"
    )


def _labels_text(row: Row) -> str:
    """Unambiguous text of a row's id, split and cluster (length-prefixed, no JSON needed)."""
    split = row.split or ""
    cluster = row.cluster or ""
    return f"{len(row.id)}:{row.id}{len(split)}:{split}{len(cluster)}:{cluster}"


def _validate(source: str, line: int, item: Any) -> Row:
    if (
        type(item) is dict
        and item.keys() <= ROW_KEYS
        and type(item.get("id")) is str
        and item["id"]
        and type(item.get("input")) is dict
        and type(item.get("expected", {})) is dict
        and type(item.get("split", "")) is str
        and type(item.get("cluster", "")) is str
    ):
        # The common, well-formed row, checked without the slower abstract-type tests.
        return Row(
            id=item["id"],
            input=item["input"],
            expected=item.get("expected"),
            split=item.get("split"),
            cluster=item.get("cluster"),
        )
    return _validate_slowly(source, line, item)


def _validate_slowly(source: str, line: int, item: Any) -> Row:
    """Any row the fast path refused: accepted when it can be read, else a clear error."""
    if not isinstance(item, Mapping):
        raise DatasetError(
            source, line, f"a row must be a JSON object, found {type(item).__name__}"
        )
    unknown = set(item) - ROW_KEYS
    if unknown:
        raise DatasetError(
            source,
            line,
            f"unknown key {sorted(unknown)[0]!r}; a row may have "
            f"only {_ROW_KEYS_TEXT} (put extra data inside "
            "'input' or 'expected')",
        )
    if "id" not in item:
        raise DatasetError(source, line, "missing 'id'; every row needs a unique string id")
    row_id = item["id"]
    if not isinstance(row_id, str) or not row_id:
        raise DatasetError(
            source, line, f"'id' must be a non-empty string, found {row_id!r}; quote numeric ids"
        )
    if "input" not in item:
        raise DatasetError(source, line, f"row {row_id!r} has no 'input' object")
    if not isinstance(item["input"], Mapping):
        raise DatasetError(
            source,
            line,
            f"'input' of row {row_id!r} must be an object, found "
            f"{type(item['input']).__name__}; wrap it, e.g. "
            '{"question": ...}',
        )
    expected = item.get("expected")
    if expected is not None and not isinstance(expected, Mapping):
        raise DatasetError(
            source,
            line,
            f"'expected' of row {row_id!r} must be an object, "
            f"found {type(expected).__name__}; wrap it, e.g. "
            '{"label": ...}',
        )
    labels = _labels(source, line, item, row_id)
    return Row(
        id=row_id,
        input=dict(item["input"]),
        expected=None if expected is None else dict(expected),
        split=labels["split"],
        cluster=labels["cluster"],
    )


def _labels(source: str, line: int, item: Mapping[str, Any], row_id: str) -> dict[str, str | None]:
    labels: dict[str, str | None] = {}
    for key in ("split", "cluster"):
        value = item.get(key)
        if value is not None and not isinstance(value, (str, int)):
            raise DatasetError(source, line, f"'{key}' of row {row_id!r} must be a string")
        labels[key] = None if value is None else str(value)
    return labels


def _select_split(dataset: Dataset, split: str) -> Dataset:
    rows = [row for row in dataset.rows if row.split == split]
    if not rows:
        raise no_split_rows_error(dataset.source, split, dataset.splits)
    return Dataset(
        source=dataset.source,
        rows=rows,
        digest=split_digest(dataset.digest, split),
        split=split,
        splits=dataset.splits,
    )


def split_digest(digest: str, split: str) -> str:
    """The digest of a split's rows: the whole dataset's digest and the split's name."""
    hasher = hashlib.sha256(digest.encode())
    hasher.update(split.encode())
    return hasher.hexdigest()


def no_split_rows_error(source: str, split: str, splits: Mapping[str, int]) -> DatasetError:
    available = ", ".join(sorted(splits)) or "none (no row has a 'split' key)"
    return DatasetError(
        source, None, f"no rows in split {split!r}; splits in this dataset: {available}"
    )
