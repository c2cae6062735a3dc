"""The case table's rows: each case of a page with the columns the reader picked.

A page of 50 cases costs a fixed number of queries: the page itself, its dataset
rows, its verdicts and its annotations, each read in bulk.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from metrics.models import CaseVerdict, MetricEstimate
from metrics.selectors import case_verdicts_by_case
from runs.models import CaseAnnotation, CaseResult, Run
from runs.selectors.annotations import annotations_by_case
from runs.selectors.cases import dataset_cases_by_id

FIXED_COLUMNS = {
    "input": "Input",
    "expected": "Expected",
    "output": "Output or error",
    "annotations": "Annotations",
    "latency": "Latency",
    "cost": "Cost",
}
"""The columns a reader may show besides the criteria, with their headings."""
DEFAULT_COLUMNS = ("expected", "output", "annotations", "latency", "cost")
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
