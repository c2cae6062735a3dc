"""A run's cases as CSV or JSON Lines, streamed: input, expected, output, error, each
criterion's value and feedback, and people's annotations; JSON Lines also carry each
case's transcript (docs/agents.md), which no spreadsheet cell would hold.

The cases are those the case table shows under the same filters, in the same order.
They are read in batches (a batch of cases, its dataset rows, verdicts and
annotations: four queries), so a 100,000-case run streams in constant memory.
CSV cells that a spreadsheet would run as a formula are escaped.
"""

from __future__ import annotations

import csv
import json
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from metrics.batching import batches
from runs.access import Actor, run_for
from runs.errors import InvalidRequestError
from runs.models import CaseAnnotation, CaseResult, Run
from runs.selectors.case_table import CaseRow, case_table_rows, criterion_tops
from runs.selectors.cases import CaseFilters, run_case_table, run_criteria
from runs.selectors.transcripts import transcripts_by_case

EXPORT_FORMATS = {"csv": "text/csv; charset=utf-8", "jsonl": "application/x-ndjson"}
EXPORT_BATCH = 1000
_FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r", "\n")
"""What a spreadsheet reads as the start of a formula (OWASP's CSV injection list)."""


@dataclass(frozen=True, slots=True)
class CaseExport:
    """An export ready to stream: its file name, media type and lines."""

    filename: str
    content_type: str
    lines: Iterator[str]


def run_cases_export(
    *, user: Actor, run_id: int, filters: CaseFilters, export_format: str
) -> CaseExport:
    """The run's cases under `filters`, as CSV or JSONL lines to stream."""
    if export_format not in EXPORT_FORMATS:
        raise InvalidRequestError(
            f"export format must be one of {', '.join(EXPORT_FORMATS)}, got {export_format!r}"
        )
    run = run_for(user=user, run_id=run_id)
    criteria = run_criteria(run=run)
    tops = criterion_tops(criteria)
    names = [item.metric for item in criteria]
    ids = list(run_case_table(run=run, filters=filters).values_list("pk", flat=True))
    if export_format == "csv":
        lines = _csv_lines((row for row, _ in _rows(run, ids, tops)), names)
    else:
        lines = _jsonl_lines(_rows(run, ids, tops, with_transcripts=True), names)
    return CaseExport(
        filename=f"run-{run.pk}-cases.{export_format}",
        content_type=EXPORT_FORMATS[export_format],
        lines=lines,
    )


def _rows(
    run: Run, ids: list[int], tops: dict[str, float], *, with_transcripts: bool = False
) -> Iterator[tuple[CaseRow, dict[str, Any] | None]]:
    for batch in batches(ids, EXPORT_BATCH):
        found = CaseResult.objects.in_bulk(batch)
        cases = [found[pk] for pk in batch if pk in found]
        transcripts = (
            transcripts_by_case(run_id=run.pk, case_ids=[case.case_id for case in cases])
            if with_transcripts
            else {}
        )
        for row in case_table_rows(run=run, cases=cases, tops=tops):
            yield row, transcripts.get(row.case.case_id)


def _annotation(item: CaseAnnotation) -> dict[str, Any]:
    return {
        "author": item.author_name,
        "rating": item.rating or None,
        "score": item.score,
        "comment": item.comment,
        "updated_at": item.updated_at.isoformat(),
    }


def case_record(row: CaseRow, criteria: list[str]) -> dict[str, Any]:
    """One case as the JSONL export writes it."""
    case = row.case
    return {
        "case_id": case.case_id,
        "position": case.position,
        "outcome": case.outcome,
        "input": row.input,
        "expected": row.expected,
        "output": case.output,
        "error": None
        if not case.error_type
        else {"type": case.error_type, "message": case.error_message},
        "latency_ms": case.latency_ms,
        "cost_usd": case.cost_usd,
        "verdicts": {
            name: {
                "value": row.cell(name).value,
                "outcome": row.cell(name).outcome,
                "feedback": row.cell(name).feedback,
                "error": row.cell(name).error,
            }
            for name in criteria
        },
        "annotations": [_annotation(item) for item in row.annotations],
    }


def _jsonl_lines(
    rows: Iterator[tuple[CaseRow, dict[str, Any] | None]], criteria: list[str]
) -> Iterator[str]:
    for row, transcript in rows:
        record = {**case_record(row, criteria), "transcript": transcript}
        yield json.dumps(record, ensure_ascii=False, default=str) + "\n"


class _Line:
    """A file-like object whose write returns the line, for csv.writer to stream through."""

    def write(self, text: str) -> str:
        return text


def csv_cell(value: Any) -> Any:
    """A value as a CSV cell: JSON for structures, and text a spreadsheet would run as a
    formula given a leading apostrophe."""
    if value is None:
        return ""
    if isinstance(value, dict | list):
        value = json.dumps(value, ensure_ascii=False, default=str)
    if isinstance(value, str) and value.startswith(_FORMULA_STARTS):
        return "'" + value
    return value


def _csv_header(criteria: list[str]) -> list[str]:
    header = ["case_id", "position", "outcome", "input", "expected", "output", "error"]
    header += ["latency_ms", "cost_usd"]
    for name in criteria:
        header += [f"{name}.value", f"{name}.outcome", f"{name}.feedback"]
    return [*header, "annotations"]


def _csv_lines(rows: Iterator[CaseRow], criteria: list[str]) -> Iterator[str]:
    writer = csv.writer(_Line())
    yield writer.writerow([csv_cell(name) for name in _csv_header(criteria)])
    for row in rows:
        record = case_record(row, criteria)
        error = record["error"]
        cells: list[Any] = [record[key] for key in ("case_id", "position", "outcome")]
        cells += [record["input"], record["expected"], record["output"]]
        cells.append(None if error is None else f"{error['type']}: {error['message']}")
        cells += [record["latency_ms"], record["cost_usd"]]
        for name in criteria:
            verdict = record["verdicts"][name]
            cells += [verdict["value"], verdict["outcome"], verdict["feedback"] or verdict["error"]]
        cells.append(record["annotations"] or None)
        yield writer.writerow([csv_cell(cell) for cell in cells])
