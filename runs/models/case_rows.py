"""The rows of a run's per-case tables, as tuples in the order of their columns.

`runs.writers.recording` writes them (it is their one writer); this module only shapes each
case into the values of one row, which keeps the writer short.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import asdict
from operator import attrgetter
from typing import Any

from django.db.models import F

import oloproof_core as engine
from metrics.batching import numbered_first_of_each
from runs.models import CaseResult

DATASET_CASE_COLUMNS = (
    "dataset_id",
    "case_id",
    "position",
    "input",
    "expected",
    "split",
    "cluster",
)


def case_outcome(case: engine.CaseResult, pass_fail: frozenset[str]) -> str:
    """missing if the system or any evaluator failed; failed if a pass/fail criterion failed."""
    if case.error is not None:
        return CaseResult.Outcome.MISSING
    outcome = CaseResult.Outcome.PASSED
    for criterion, verdict in case.verdicts.items():
        if verdict.value is None:
            return CaseResult.Outcome.MISSING
        if criterion in pass_fail and verdict.value < 1.0:
            outcome = CaseResult.Outcome.FAILED
    return outcome


CASE_ID = attrgetter("id")
"""A case's (or a dataset row's) id, the key its rows are unique by."""


CASE_RESULT_COLUMNS = (
    "run_id",
    "case_id",
    "position",
    "output",
    "error_type",
    "error_message",
    "error_traceback",
    "latency_ms",
    "cost_usd",
    "artifacts",
    "model_calls",
    "outcome",
)


def case_result_row(
    run_id: int, position: int, case: engine.CaseResult, pass_fail: frozenset[str]
) -> tuple[Any, ...]:
    error = case.error
    calls = case.measurements.model_calls
    return (
        run_id,
        case.id,
        position,
        case.output if error is None else None,
        "" if error is None else engine.storable_text(error.type)[:200],
        "" if error is None else engine.storable_text(error.message),
        "" if error is None else engine.storable_text(error.traceback),
        case.latency_ms,
        case.cost_usd,
        case.artifacts,
        [asdict(call) for call in calls] if calls else [],
        case_outcome(case, pass_fail),
    )


OUTCOMES_COUNTED = ("passed", "failed", "missing")
"""The outcomes a run keeps a count of (`Run.outcome_<outcome>`) as its cases are recorded."""
OUTCOME_COUNTS_ZERO = {f"outcome_{outcome}": 0 for outcome in OUTCOMES_COUNTED}
_OUTCOME = CASE_RESULT_COLUMNS.index("outcome")


def case_result_rows(
    run_id: int,
    cases: Sequence[engine.CaseResult],
    pass_fail: frozenset[str],
    first_position: int,
    *,
    counts: Counter[str],
) -> Iterator[tuple[Any, ...]]:
    """The rows of `cases` (the first of each id), each counted into `counts` by outcome."""
    for index, case in numbered_first_of_each(cases, key=CASE_ID):
        row = case_result_row(run_id, first_position + index, case, pass_fail)
        counts[row[_OUTCOME]] += 1
        yield row


def outcome_increments(counts: Counter[str]) -> dict[str, Any]:
    """The run's fields adding `counts` to its stored counts (for an UPDATE of the run)."""
    return {
        f"outcome_{outcome}": F(f"outcome_{outcome}") + counts[outcome]
        for outcome in OUTCOMES_COUNTED
        if counts[outcome]
    }
