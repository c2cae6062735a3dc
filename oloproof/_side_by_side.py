"""`oloproof.compare_side_by_side(baseline, [candidate, ...])`: runs by reference, compared
as the dashboard's compare page compares them."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from oloproof._results import RunRef, load
from oloproof_core import ConfigError, Result, Store, different_cases

if TYPE_CHECKING:
    from oloproof_core.results.compare import SideBySide


def different_datasets(baseline: Result, candidate: Result) -> str:
    """Why two runs are not compared, as the dashboard's compare page refuses them: they
    were evaluated on different datasets (by content digest; one dataset repeated a
    different number of times is the same cases). "" when they were not."""
    return different_cases(baseline.provenance, candidate.provenance)


def compare_side_by_side(
    baseline: RunRef,
    candidates: Sequence[RunRef],
    *,
    confidence: float = 0.95,
    fdr: bool = True,
    store: Store | None = None,
) -> SideBySide:
    """Each candidate compared with `baseline` on the same cases, paired by case id.

    Runs are given as `load` takes them (a Result, a result file, a recorded run's id);
    at most eight in all, all of one dataset (a ConfigError says which differs).
    `str()` of the answer is the command's table; `.to_dict()` the REST API's shape.
    """
    from oloproof_core.results.compare import check_side_by_side
    from oloproof_core.results.compare import compare_side_by_side as compared

    check_side_by_side(1 + len(candidates))
    first = load(baseline, store=store)
    others = [load(reference, store=store) for reference in candidates]
    for other in others:
        problem = different_datasets(first, other)
        if problem:
            raise ConfigError(problem)
    return compared(first, others, confidence, fdr=fdr)
