"""The case table's pages and rows: each case of a page with the columns the reader picked.

A page of 50 cases costs a fixed number of queries whatever its depth: the page's
keys from where its cursor points (runs.selectors.keyset: no offset), its cases by id, their
dataset rows, verdicts and annotations, each read in bulk. The table's size comes
from the counts kept on the run, or is counted up to a cap under a filter those
counts do not answer.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from django.db.models import QuerySet

from metrics.models import CaseVerdict, MetricEstimate
from metrics.selectors import case_verdicts_by_case
from runs.models import CaseAnnotation, CaseResult, Run
from runs.selectors.annotations import ANNOTATION_FILTERS, annotations_by_case
from runs.selectors.cases import (
    CaseFilters,
    cases_in_order,
    dataset_cases_by_id,
    run_case_table,
)
from runs.selectors.keyset import Count, Cursor, KeyOrder, capped_count, keyset_page

FIXED_COLUMNS = {
    "input": "Input",
    "expected": "Expected",
    "output": "Output or error",
    "annotations": "Annotations",
    "latency": "Latency",
    "cost": "Cost",
}
"""The columns a reader may show besides the criteria, with their headings."""
DEFAULT_COLUMNS = ("input", "expected", "output", "annotations", "latency", "cost")
DEFAULT_CRITERIA = 4
"""Criteria shown as columns until the reader picks: the run's first few."""


@dataclass(frozen=True, slots=True)
class CriterionCell:
    """One criterion's verdict on one case: its value, pass/fail reading and feedback."""

    criterion: str
    value: float | None
    outcome: str
    feedback: str
    error: str


@dataclass(slots=True)
class CaseRow:
    case: CaseResult
    input: Any = None
    expected: Any = None
    cells: dict[str, CriterionCell] = field(default_factory=dict)
    annotations: list[CaseAnnotation] = field(default_factory=list)

    def cell(self, criterion: str) -> CriterionCell:
        return self.cells.get(criterion) or CriterionCell(criterion, None, "pending", "", "")


@dataclass(frozen=True, slots=True)
class Columns:
    fixed: tuple[str, ...]
    criteria: tuple[str, ...]


def columns_chosen(
    *, fixed: Sequence[str] | None, criteria: Sequence[str] | None, known: Sequence[str]
) -> Columns:
    """The columns asked for (unknown names dropped), or the defaults when nothing was."""
    if fixed is None and criteria is None:
        return Columns(DEFAULT_COLUMNS, tuple(known[:DEFAULT_CRITERIA]))
    return Columns(
        tuple(name for name in FIXED_COLUMNS if name in (fixed or ())),
        tuple(name for name in known if name in (criteria or ())),
    )


def verdict_outcome(value: float | None, top: float) -> str:
    if value is None:
        return "missing"
    return "passed" if value >= top else "failed"


def criterion_tops(criteria: Sequence[MetricEstimate]) -> dict[str, float]:
    """Each criterion's passing value: the top of a score's range, 1 for pass/fail."""
    return {
        item.metric: float(item.score_range[1])
        if item.value_type == "score" and len(item.score_range) == 2
        else 1.0
        for item in criteria
    }


def case_table_rows(
    *, run: Run, cases: Sequence[CaseResult], tops: dict[str, float]
) -> list[CaseRow]:
    """The page's cases with their dataset rows, verdicts and annotations (bulk reads)."""
    ids = [case.case_id for case in cases]
    rows = dataset_cases_by_id(run=run, case_ids=ids)
    verdicts = case_verdicts_by_case(run_id=run.pk, case_ids=ids)
    annotations = annotations_by_case(run=run, case_ids=ids)
    table = []
    for case in cases:
        row = rows.get(case.case_id)
        table.append(
            CaseRow(
                case=case,
                input=None if row is None else row.input,
                expected=None if row is None else row.expected,
                cells=_cells(verdicts.get(case.case_id, []), tops),
                annotations=annotations.get(case.case_id, []),
            )
        )
    return table


def _cells(verdicts: list[CaseVerdict], tops: dict[str, float]) -> dict[str, CriterionCell]:
    return {
        verdict.criterion: CriterionCell(
            criterion=verdict.criterion,
            value=verdict.value,
            outcome=verdict_outcome(verdict.value, tops.get(verdict.criterion, 1.0)),
            feedback=verdict.feedback or "",
            error=verdict.error or "",
        )
        for verdict in verdicts
    }


CASE_ORDER = KeyOrder("position")
"""A run's cases in the order they were recorded (as `run_cases` orders them)."""
PAGE_SIZE = 50


@dataclass(frozen=True, slots=True)
class CaseTablePage:
    cases: list[CaseResult]
    next: str | None
    previous: str | None
    first: bool
    total: Count


def case_table_page(
    *,
    run: Run,
    filters: CaseFilters,
    counts: dict[str, int],
    cursor: Cursor | None = None,
    size: int = PAGE_SIZE,
) -> CaseTablePage:
    """One page of the run's case table under `filters`, after or before `cursor`.

    `counts` are the run's cases by outcome (`run_outcome_counts`), which give the
    table's size when the filters are none or an outcome alone."""
    query = run_case_table(run=run, filters=filters)
    page = keyset_page(query, order=CASE_ORDER, size=size, cursor=cursor)
    return CaseTablePage(
        cases=cases_in_order(case_ids=page.ids),
        next=page.next,
        previous=page.previous,
        first=page.first,
        total=case_table_total(query=query, filters=filters, counts=counts),
    )


def case_table_total(
    *, query: QuerySet[CaseResult], filters: CaseFilters, counts: dict[str, int]
) -> Count:
    """How many cases the table holds: from the run's counts when they answer, else
    counted up to a cap (`capped` says so)."""
    searched = bool((filters.search or "").strip()) or filters.annotation in ANNOTATION_FILTERS
    if not searched and not filters.outcome:
        return Count(sum(counts.values()))
    if not searched and not filters.criterion and filters.outcome in counts:
        return Count(counts[filters.outcome])
    return capped_count(query)


def page_number_cursor(number: str | None, *, filters: CaseFilters) -> Cursor | None:
    """Where the table's `?page=N` of earlier links starts: the case at position
    (N - 1) × 50 of an unfiltered table (positions are the recorded cases' 0, 1, 2, …),
    sought through the index; a filtered table starts at its first page."""
    if not number or not number.isdecimal() or len(number) > 9 or filters != CaseFilters():
        return None
    start = (int(number) - 1) * PAGE_SIZE
    # After the last possible id at the position before: the first case at `start`.
    return Cursor((start - 1, 2**63 - 1)) if start > 0 else None
