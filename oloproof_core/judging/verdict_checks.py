"""A verdict judged in this process, checked as an evaluator's own process checks its own.

An evaluator that runs in a process of its own sends its verdict back through
`contained_evaluators._wire`, which refuses feedback and sub-score names no database can
store. One judged here (a built-in, or any evaluator when the run is `isolation="thread"`)
passes the same check, so a NUL in feedback or a sub-score's metric name over its
column's length is the verdict's ContractError on every database, never a recording
that SQLite keeps and PostgreSQL refuses.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from oloproof_core._util.limits import label_problem, text_problem
from oloproof_core.errors import ContractError

if TYPE_CHECKING:
    from oloproof_core.cases.verdict import Verdict
    from oloproof_core.judging.evaluators import Evaluator


def storable_verdict(evaluator: Evaluator, verdict: Verdict) -> Verdict:
    """`verdict`, or a ContractError saying which of its texts no database stores."""
    problem = None if verdict.feedback is None else text_problem(verdict.feedback)
    if problem:
        raise ContractError(f"the verdict's feedback {problem}")
    for name in verdict.scores:
        metric = f"{evaluator.criterion}.{name}"
        problem = text_problem(name) if isinstance(name, str) else "is not a string"
        problem = problem or label_problem(metric, "metric")
        if problem:
            raise ContractError(
                f"the verdict's sub-score {str(name)[:40]!r} (metric {metric[:60]!r}) {problem}"
            )
    return verdict
