"""Which cases' outputs differ between two results held in memory.

A case's output "differs" when the two runs recorded a different output or a
different error (type and message; the traceback is left out, as it names lines of
code that any edit moves). Only cases in both runs count: a case one run lacks is
the `missing` filter's. A store reads the same from its own records (the platform
compares them in its database) and hands the ids to `Comparison.cases`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from oloproof_core.cases.case import CaseResult
    from oloproof_core.results.result import Result


def outputs_changed(baseline: Result, candidate: Result) -> tuple[str, ...]:
    """Ids of the cases in both results whose output or error differs, candidate's order.

    It compares what the results hold: a result that kept only its cases' figures
    (`keep_cases=False`) holds no outputs, so load it from its store first.
    """
    before = {case.id: case for case in baseline.cases}
    changed = []
    for case in candidate.cases:
        old = before.get(case.id)
        if old is not None and _recorded(old) != _recorded(case):
            changed.append(case.id)
    return tuple(changed)


def _recorded(case: CaseResult) -> tuple[Any, ...]:
    error = case.error
    if error is not None:
        return (None, error.type, error.message)
    return (case.output, "", "")
