"""Evaluators in processes of their own: bounded like systems, judged cache first.

A metric file, an `@evaluator` function or a model judge is code under test as much as
the system is: it could loop for ever, end the process, read the operator's secrets or
call a provider past the meter. So it judges in processes of its own, made by the
system pool's machinery (`oloproof_core.execution.isolation`): each verdict has a time limit,
the process runs in the sandbox with a scrubbed environment and a memory cap, and its
model calls go through a metering gateway under the evaluator's role. See
docs/isolation.md, "Evaluators".

Names load on first use: an evaluator's own process imports `_in_child` from here and
needs none of the parent's side.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from oloproof_core._util.names_on_first_use import names_on_first_use

if TYPE_CHECKING:
    from oloproof_core.judging.contained._judging import (
        ContainedJudging,
        runs_in_process_of_its_own,
    )

_EXPORTS: dict[str, str] = {
    "ContainedJudging": "._judging",
    "runs_in_process_of_its_own": "._judging",
}

__all__ = ["ContainedJudging", "runs_in_process_of_its_own"]

__getattr__ = names_on_first_use(__name__, _EXPORTS, globals())
