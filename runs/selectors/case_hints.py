""" "Run 3 has no case 'c7' (did you mean 'c07'?)": the refusal of a case id a person typed.

Every place a person names a case of a run (a label, a labels file, an annotation, the
case page) refuses an unknown id with the close matches among the run's own cases.
"""

from __future__ import annotations

from collections.abc import Callable

from oloproof_core import CLOSE_IDS_COMPARED, did_you_mean
from runs.errors import NotFoundError
from runs.models import CaseResult, Run


def run_case_ids(run: Run) -> list[str]:
    """The run's case ids, as many as a hint compares."""
    ids = CaseResult.objects.filter(run=run).values_list("case_id", flat=True)
    return list(ids[:CLOSE_IDS_COMPARED])


def case_not_found(
    run: Run, case_id: str, ids: Callable[[], list[str]] | None = None
) -> NotFoundError:
    """The refusal of `case_id`, naming the run's cases it most likely meant; `ids` gives
    them when the caller has them already (one reading for a whole labels file)."""
    known = ids() if ids is not None else run_case_ids(run)
    return NotFoundError(f"run {run.pk} has no case {case_id!r}{did_you_mean(case_id, known)}")
