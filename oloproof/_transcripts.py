"""Where two runs' transcripts of one case first differ: `oloproof.transcript_difference`.

`oloproof compare A B --steps CASE` prints the same.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from oloproof._results import RunRef, load
from oloproof_core import ConfigError

if TYPE_CHECKING:
    from oloproof_core.results.compare import StepDifference


def transcript_difference(
    baseline: RunRef, candidate: RunRef, case_id: str
) -> StepDifference | None:
    """The first step at which the case's transcripts in the two runs differ (latency,
    tokens and cost left out), or None when they said and did the same.

    `baseline` and `candidate` are runs as `load` takes them: a `Result`, a result file
    (`oloproof run --json`) or a recorded run's number.
    """
    from oloproof_core.results.compare import first_difference

    runs = (load(baseline), load(candidate))
    sides = [next((case for case in run.cases if case.id == case_id), None) for run in runs]
    if sides[0] is None and sides[1] is None:
        raise ConfigError(
            f"case {case_id!r}: neither run has a case with this id; the case ids are the "
            "dataset's (the `id` of each row)"
        )
    old, new = (None if side is None else side.trace for side in sides)
    return first_difference(old, new)
