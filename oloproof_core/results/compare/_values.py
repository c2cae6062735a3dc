"""Per-case values of a metric, read back from a result's verdicts."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Protocol

from oloproof_core.results.columns.case_columns import CaseColumns, listed

if TYPE_CHECKING:
    from oloproof_core.cases.case import CaseResult
    from oloproof_core.results.estimate import MetricEstimate


class RunCases(Protocol):
    """What reading values takes of a run (a `Result` has it): its cases, whole or as
    columns. Named so, the result's own readers (labels) never import the result."""

    @property
    def cases(self) -> Sequence[CaseResult]: ...


def values_listed(result: RunCases, metric: MetricEstimate) -> list[float | None]:
    """The metric's value on each case, in case order, None where it is missing."""
    cases = result.cases
    if isinstance(cases, CaseColumns):
        return listed(cases.metric_column(metric))
    return list(values_by_case(result, metric).values())


def values_by_case(result: RunCases, metric: MetricEstimate) -> dict[str, float | None]:
    """Case id -> the metric's value on that case, None where it is missing.

    A sub-score (`criterion.name`) reads its verdict's `scores`; a case whose
    verdict is missing has every sub-score missing too.
    """
    criterion = metric.criterion
    sub_score = metric.metric[len(criterion) + 1 :] if metric.is_sub_score else None
    cases = result.cases
    if isinstance(cases, CaseColumns):
        return dict(zip(cases.ids, listed(cases.metric_column(metric)), strict=True))
    values: dict[str, float | None] = {}
    for case in cases:
        verdict = case.verdicts.get(criterion)
        if verdict is None or verdict.value is None:
            values[case.id] = None
        elif sub_score is None:
            values[case.id] = float(verdict.value)
        else:
            score = verdict.scores.get(sub_score)
            values[case.id] = None if score is None else float(score)
    return values
