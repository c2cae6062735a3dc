"""A comparison exported case by case, as CSV or JSON Lines, streamed in chunks.

One row per case: its id and status, the input and expected value, both runs'
outputs and errors, and each metric's value on both sides with the change. The
content (inputs, outputs) comes from a `ContentSource`, asked once per chunk of
case ids, so the platform reads it in bulk from its database and the library
from two results in memory; the same lines come out either way.

CSV cells that a spreadsheet would run as a formula (text starting with = + - @,
a tab or a carriage return) are written with a leading apostrophe (OWASP's CSV
injection advice); numbers written by the export itself are left as numbers.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from oloproof_core._util.text_files import text_written
from oloproof_core.errors import ConfigError
from oloproof_core.results.compare._cases import CaseChange, CaseChanges
from oloproof_core.results.compare._outputs import outputs_changed

if TYPE_CHECKING:
    from oloproof_core.results.compare._figures import ComparisonFigures
    from oloproof_core.results.result import Result

EXPORT_FORMATS = ("csv", "jsonl")
EXPORT_CHUNK = 1000
"""Cases whose content is asked for at once."""
_FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


@dataclass(frozen=True, slots=True)
class CaseContent:
    """What a case looked like in the two runs (None where a run lacks the case)."""

    input: Any = None
    expected: Any = None
    baseline_output: Any = None
    candidate_output: Any = None
    baseline_error: str | None = None
    candidate_error: str | None = None


ContentSource = Callable[[Sequence[str]], Mapping[str, CaseContent]]


def export_format(destination: str | Path, format: str | None = None) -> str:
    """The export format named, or the one the file's suffix says (.csv, .jsonl)."""
    chosen = format or Path(destination).suffix.lstrip(".").lower()
    if chosen == "json":
        chosen = "jsonl"
    if chosen not in EXPORT_FORMATS:
        raise ConfigError(
            f"cannot export a comparison to {str(destination)!r}: name a .csv or .jsonl "
            f"file (or give the format: {' or '.join(EXPORT_FORMATS)})"
        )
    return chosen


def export_lines(
    changes: CaseChanges, content: ContentSource, *, format: str, chunk: int = EXPORT_CHUNK
) -> Iterator[str]:
    """The export as lines (each ending in a newline): a CSV header then rows, or JSONL."""
    chosen = export_format("", format)
    names = changes.metric_names
    if chosen == "csv":
        yield _csv_line(_csv_header(names))
    for start in range(0, len(changes), chunk):
        rows = changes[start : start + chunk]
        found = content([row.case_id for row in rows])
        for row in rows:
            item = found.get(row.case_id) or CaseContent()
            if chosen == "csv":
                yield _csv_line(_csv_row(row, item))
            else:
                yield json.dumps(_record(row, item), ensure_ascii=False, default=str) + "\n"


def results_content(baseline: Result, candidate: Result) -> ContentSource:
    """Case content read from two results in memory (the library and the CLI)."""
    before = {case.id: case for case in baseline.cases}
    after = {case.id: case for case in candidate.cases}

    def content(case_ids: Sequence[str]) -> dict[str, CaseContent]:
        found = {}
        for case_id in case_ids:
            old, new = before.get(case_id), after.get(case_id)
            either = new or old
            found[case_id] = CaseContent(
                input=None if either is None else either.input,
                expected=None if either is None else either.expected,
                baseline_output=None if old is None else old.output,
                candidate_output=None if new is None else new.output,
                baseline_error=None if old is None or old.error is None else str(old.error),
                candidate_error=None if new is None or new.error is None else str(new.error),
            )
        return found

    return content


def comparison_export(
    comparison: ComparisonFigures,
    destination: str | Path,
    *,
    baseline: Result,
    candidate: Result,
    format: str | None = None,
    show: str = "all",
    metric: str | None = None,
    order: str = "case",
    repeat_status: str = "all",
) -> int:
    """Write the comparison case by case to `destination`; returns the number of rows."""
    chosen = export_format(destination, format)
    changed = outputs_changed(baseline, candidate) if show == "output_changed" else None
    changes = CaseChanges(
        comparison, show=show, metric=metric, order=order, output_changed=changed,
        repeat_status=repeat_status,
    )  # fmt: skip
    lines = export_lines(changes, results_content(baseline, candidate), format=chosen)
    with text_written(destination, what="the comparison's cases") as handle:
        handle.writelines(lines)
    return len(changes)


def _csv_header(names: Sequence[str]) -> list[str]:
    fixed = ["case_id", "status", "in_baseline", "in_candidate", "input", "expected"]
    sides = ["baseline_output", "candidate_output", "baseline_error", "candidate_error"]
    per_metric = [
        f"{name} {part}" for name in names for part in ("baseline", "candidate", "change")
    ]
    return [_safe_text(cell) for cell in fixed + sides + per_metric]


def _csv_row(row: CaseChange, item: CaseContent) -> list[str]:
    texts = [
        row.case_id,
        row.status,
        _flag(row.in_baseline),
        _flag(row.in_candidate),
        _text(item.input),
        _text(item.expected),
        _text(item.baseline_output),
        _text(item.candidate_output),
        _text(item.baseline_error),
        _text(item.candidate_error),
    ]
    numbers = [
        _number(value)
        for change in row.metrics
        for value in (change.baseline, change.candidate, change.change)
    ]
    return [_safe_text(cell) for cell in texts] + numbers


def _record(row: CaseChange, item: CaseContent) -> dict[str, Any]:
    return {
        "case_id": row.case_id,
        "status": row.status,
        "in_baseline": row.in_baseline,
        "in_candidate": row.in_candidate,
        "input": item.input,
        "expected": item.expected,
        "baseline": {"output": item.baseline_output, "error": item.baseline_error},
        "candidate": {"output": item.candidate_output, "error": item.candidate_error},
        "metrics": {change.metric: change.to_dict() for change in row.metrics},
        **({} if row.repeat_case is None else {"repeat_case": row.repeat_case.to_dict()}),
    }


def _csv_line(cells: list[str]) -> str:
    buffer = io.StringIO()
    csv.writer(buffer, lineterminator="\n").writerow(cells)
    return buffer.getvalue()


def _text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, default=str)


def _flag(value: bool) -> str:
    return "yes" if value else "no"


def _number(value: float | None) -> str:
    return "" if value is None else repr(value)


def _safe_text(cell: str) -> str:
    """Text a spreadsheet would evaluate as a formula, made inert with a leading apostrophe."""
    return "'" + cell if cell.startswith(_FORMULA_STARTS) else cell
