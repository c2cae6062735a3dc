"""A repeated run's cases (`repeats: k`): each case's repeats side by side, and which
repeat of which case a row of the case table is.

A repeat is recorded as a case of its own (`<case id>#r<j>`, docs/repeats.md); the run
says how many repeats each case has, in its config when it was submitted to the workers
and in its figures (`provenance["repeats"]`) once it is concluded.
"""

from __future__ import annotations

from dataclasses import dataclass

import oloproof_core as engine
from metrics.models import CaseVerdict
from metrics.selectors import case_verdicts_by_case
from runs.models import CaseResult, Run


def run_repeats(*, run: Run) -> int:
    """How many times the run ran each case (1: no repeats)."""
    if (concluded := engine.repeats_in(run.provenance or {})) > 1:
        return concluded
    repeats = (run.config or {}).get("repeats")
    if engine.is_auto(repeats):
        return engine.AUTO_MOST
    return repeats if isinstance(repeats, int) and repeats > 1 else 1


def run_repeats_auto(*, run: Run) -> bool:
    """Whether the run ran with `repeats: auto`: its cases' tries differ."""
    return engine.tries_vary(run.provenance or {}) or engine.is_auto(
        (run.config or {}).get("repeats")
    )


@dataclass(frozen=True, slots=True)
class RepeatColumn:
    """One repeat of the case: its recorded result, its index, whether it is the one shown."""

    case: CaseResult
    repeat: int
    shown: bool


@dataclass(frozen=True, slots=True)
class RepeatVerdicts:
    """One criterion's verdict in each repeat, in the columns' order (None: none recorded)."""

    criterion: str
    verdicts: list[CaseVerdict | None]


@dataclass(frozen=True, slots=True)
class CaseRepeats:
    case_id: str
    """The case's own id, without its repeat's mark."""
    repeats: int
    columns: list[RepeatColumn]
    rows: list[RepeatVerdicts]


def case_repeats(*, run: Run, case_id: str) -> CaseRepeats | None:
    """Every recorded repeat of the case `case_id` is a repeat of, with its verdicts;
    None when the run has no repeats or `case_id` is not a repeat's id."""
    repeats = run_repeats(run=run)
    if repeats == 1 or not engine.repeat_of(case_id):
        return None
    own = engine.case_id_of(case_id)
    ids = [engine.repeat_id(own, j) for j in range(1, repeats + 1)]
    found = CaseResult.objects.filter(run=run, case_id__in=ids).order_by("position", "id")
    verdicts = case_verdicts_by_case(run_id=run.pk, case_ids=ids)
    columns = [
        RepeatColumn(
            case=case, repeat=engine.repeat_of(case.case_id), shown=case.case_id == case_id
        )
        for case in found
    ]
    by_case = [
        {verdict.criterion: verdict for verdict in verdicts.get(column.case.case_id, [])}
        for column in columns
    ]
    criteria = sorted({criterion for found_verdicts in by_case for criterion in found_verdicts})
    rows = [
        RepeatVerdicts(criterion, [found_verdicts.get(criterion) for found_verdicts in by_case])
        for criterion in criteria
    ]
    tried = len(columns) if run_repeats_auto(run=run) else repeats  # auto: its own tries
    return CaseRepeats(case_id=own, repeats=tried, columns=columns, rows=rows)
