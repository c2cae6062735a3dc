"""Datasets: rows of `{"id", "input", "expected"}` read from JSONL, JSON, CSV or Python.

Rows are validated as they stream in; the first bad row stops the load with an
error naming the file, the line and what to change. The dataset digest is a
SHA-256 over the canonical form of every row in order, so it identifies the
content, not the file name or its formatting.
"""

from __future__ import annotations

import csv
import hashlib
import json
import os
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from oloproof_core._canonical import canonical_json
from oloproof_core.dataset_checks import check_row_limits, json_constant_refused
from oloproof_core.errors import DatasetError

ROW_KEYS = frozenset({"id", "input", "expected", "split", "cluster"})
_ROW_KEYS_TEXT = ", ".join(sorted(ROW_KEYS))


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


@dataclass(slots=True)
class Dataset:
    source: str
    rows: list[Row]
    digest: str
    split: str | None = None
    splits: dict[str, int] = field(default_factory=dict)

    def __len__(self) -> int:
        return len(self.rows)


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
        records = _read_path(path)
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


def _read_path(path: str) -> Iterator[tuple[int, Any]]:
    if not os.path.exists(path):
        raise DatasetError(
            path,
            None,
            f"file not found (paths are relative to the working directory {os.getcwd()})",
        )
    if not os.path.isfile(path):
        raise DatasetError(path, None, "not a file (a dataset is one .jsonl, .json or .csv file)")
    lowered = path.lower()
    if lowered.endswith((".jsonl", ".ndjson")):
        return _read_jsonl(path)
    if lowered.endswith(".json"):
        return _read_json_array(path)
    if lowered.endswith(".csv"):
        return _read_csv(path)
    raise DatasetError(
        path,
        None,
        "unknown dataset format; use .jsonl (one JSON object per "
        "line), .json (an array of objects) or .csv",
    )


def _lines(path: str) -> Iterator[tuple[int, str]]:
    """The file's lines, numbered; bytes that are not UTF-8 are an error naming the line."""
    with open(path, "rb") as handle:
        for number, raw in enumerate(handle, start=1):
            try:
                yield number, raw.decode("utf-8")
            except UnicodeDecodeError as exc:
                raise DatasetError(
                    path, number, f"not UTF-8 text (byte {exc.start + 1} of the line)"
                ) from None


_DECODER = json.JSONDecoder(parse_constant=json_constant_refused)
"""One decoder for every line: `json.loads` with an option builds a new one per call."""


def _json(text: str) -> Any:
    if text.startswith("\ufeff"):
        return json.loads(text, parse_constant=json_constant_refused)  # its error names the BOM
    return _DECODER.decode(text)


def _read_jsonl(path: str) -> Iterator[tuple[int, Any]]:
    for number, line in _lines(path):
        if not line.strip():
            continue
        try:
            yield number, _json(line)
        except json.JSONDecodeError as exc:
            raise DatasetError(
                path,
                number,
                f"invalid JSON at column {exc.colno}: {exc.msg}; each line must be one JSON object",
            ) from None
        except (ValueError, RecursionError) as exc:
            raise DatasetError(path, number, f"cannot read this JSON: {_reason(exc)}") from None


def _reason(exc: BaseException) -> str:
    if isinstance(exc, RecursionError):
        return "nested too deeply"
    return str(exc)


def _read_json_array(path: str) -> Iterator[tuple[int, Any]]:
    text = "".join(line for _, line in _lines(path))
    try:
        data = _json(text)
    except json.JSONDecodeError as exc:
        raise DatasetError(
            path, exc.lineno, f"invalid JSON at column {exc.colno}: {exc.msg}"
        ) from None
    except (ValueError, RecursionError) as exc:
        raise DatasetError(path, None, f"cannot read this JSON: {_reason(exc)}") from None
    if not isinstance(data, list):
        raise DatasetError(
            path, 1, f"a .json dataset must be an array of row objects, found {type(data).__name__}"
        )
    lines = _object_start_lines(text, len(data))
    for index, item in enumerate(data):
        yield lines[index], item


def _object_start_lines(text: str, count: int) -> list[int]:
    """Line on which each top-level array element starts, for error messages."""
    decoder = json.JSONDecoder()
    lines: list[int] = []
    position = text.index("[") + 1
    for _ in range(count):
        while text[position] in " \t\r\n,":
            position += 1
        lines.append(text.count("\n", 0, position) + 1)
        _, position = decoder.raw_decode(text, position)
    return lines


def _read_csv(path: str) -> Iterator[tuple[int, Any]]:
    """Strict CSV: every row as wide as the header, no duplicate column, balanced quotes."""
    with open(path, encoding="utf-8", errors="strict", newline="") as handle:
        reader = csv.reader(handle, strict=True)
        try:
            yield from _csv_rows(path, reader)
        except csv.Error as exc:
            raise DatasetError(path, reader.line_num, f"invalid CSV: {exc}") from None
        except UnicodeDecodeError as exc:
            raise DatasetError(
                path, reader.line_num + 1, f"not UTF-8 text (byte {exc.start + 1})"
            ) from None


def _csv_rows(path: str, reader: Any) -> Iterator[tuple[int, Any]]:
    columns = next(reader, None) or []
    _check_csv_columns(path, columns)
    for cells in reader:
        if not cells:
            continue
        if len(cells) != len(columns):
            raise DatasetError(
                path,
                reader.line_num,
                f"{len(cells)} fields where the header has {len(columns)}; every row needs "
                "one field per column (quote fields that contain commas)",
            )
        item: dict[str, Any] = {}
        for column, value in zip(columns, cells, strict=True):
            if "." in column:
                part, name = column.split(".", 1)
                item.setdefault(part, {})[name] = value
            elif value != "" or column == "id":
                item[column] = value
        yield reader.line_num, item


def _check_csv_columns(path: str, columns: list[str]) -> None:
    seen: set[str] = set()
    for column in columns:
        top = column.split(".", 1)[0]
        if top not in ROW_KEYS or (top in {"input", "expected"} and "." not in column):
            raise DatasetError(
                path,
                1,
                f"unknown column {column!r}; columns are id, "
                "split, cluster, input.<name> and expected.<name>",
            )
        if column in seen:
            raise DatasetError(path, 1, f"column {column!r} appears twice")
        seen.add(column)


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
    rows: list[Row] = []
    first_line: dict[str, int] = {}
    hasher = hashlib.sha256()
    for line, item in records:
        row = _validate(source, line, item)
        check_row_limits(source, line, row)
        if row.id in first_line:
            raise DatasetError(
                source,
                line,
                f"duplicate id {row.id!r} (first on line {first_line[row.id]}); ids must be unique",
            )
        first_line[row.id] = line
        input_bytes = _canonical_part(source, line, "input", row.input)
        expected_bytes = _canonical_part(source, line, "expected", row.expected)
        row.input_digest = hashlib.sha256(input_bytes).hexdigest()
        row.expected_digest = hashlib.sha256(expected_bytes).hexdigest()
        # JSON texts delimit themselves and the labels are length-prefixed, so one
        # update per row keeps the digest unambiguous.
        hasher.update(_labels_text(row).encode() + input_bytes + expected_bytes)
        rows.append(row)
    if not rows:
        raise DatasetError(source, None, "the dataset has no rows")
    splits: dict[str, int] = {}
    for row in rows:
        if row.split is not None:
            splits[row.split] = splits.get(row.split, 0) + 1
    return Dataset(source=source, rows=rows, digest=hasher.hexdigest(), splits=splits)


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
        available = ", ".join(sorted(dataset.splits)) or "none (no row has a 'split' key)"
        raise DatasetError(
            dataset.source, None, f"no rows in split {split!r}; splits in this dataset: {available}"
        )
    hasher = hashlib.sha256(dataset.digest.encode())
    hasher.update(split.encode())
    return Dataset(
        source=dataset.source,
        rows=rows,
        digest=hasher.hexdigest(),
        split=split,
        splits=dataset.splits,
    )
