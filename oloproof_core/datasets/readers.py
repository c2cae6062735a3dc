"""Reading a dataset file's records, each with the line it starts on: JSONL, JSON or CSV.

The records are what the file holds, not yet rows: `oloproof_core.datasets.dataset` checks each
as it arrives. JSONL and CSV are read a line at a time, so a reader holds one record; a
.json file is one array, parsed whole. A line that is not UTF-8, not JSON or not CSV is
an error naming the file and the line.
"""

from __future__ import annotations

import csv
import json
import os
from collections.abc import Iterator
from typing import Any

from oloproof_core._util.text_files import not_utf8
from oloproof_core.datasets.checks import json_constant_refused
from oloproof_core.errors import DatasetError

ROW_KEYS = frozenset({"id", "input", "expected", "split", "cluster"})


def read_records(path: str) -> Iterator[tuple[int, Any]]:
    """The records of a .jsonl (.ndjson), .json or .csv file, each with its line, read as
    they are asked for; a missing file or an unknown format is refused at once."""
    if not os.path.exists(path):
        # A relative path was resolved by this process; an absolute one by whoever gave it
        # (a run config resolves from its own folder), so only the first names the folder.
        relative = (
            ""
            if os.path.isabs(path)
            else f" (a relative path is read from the working directory {os.getcwd()})"
        )
        raise DatasetError(path, None, f"file not found{relative}")
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
                raise DatasetError(path, number, _not_utf8(path, raw, exc.start)) from None


def _not_utf8(path: str, raw: bytes, start: int) -> str:
    """What the file is instead of UTF-8, judged by its first bytes, and how to fix it."""
    with open(path, "rb") as handle:
        head = handle.read(4096)
    return not_utf8(raw, start, name=os.path.basename(path), head=head)[1]


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
            problem = not_utf8(exc.object, exc.start, name=os.path.basename(path))[1]
            raise DatasetError(path, reader.line_num + 1, problem) from None


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
