"""A run's per-case values as plain lists, one per metric, with the cases' clusters.

What `value_columns` makes arrays of, and what a store encodes when it keeps a finished
run's columns: apart from `_columns` so that recording a run needs no NumPy.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from oloproof_core.results.columns.case_columns import CaseColumns
from oloproof_core.results.compare._values import values_by_case

if TYPE_CHECKING:
    from oloproof_core.results.result import Result

NO_CLUSTER = -1
"""A case's cluster code when it has no cluster."""


@dataclass(frozen=True, slots=True)
class ColumnLists:
    """`ids` in the run's order; `values[metric]` aligned with them, NaN where missing;
    `cluster_codes[i]` indexes `cluster_labels` (`NO_CLUSTER` without one), both None
    when no case has a cluster."""

    ids: list[str]
    values: dict[str, list[float]]
    cluster_codes: list[int] | None = None
    cluster_labels: list[str] | None = None


def column_lists(result: Result) -> ColumnLists:
    """Every metric of `result` as a list over its cases, with the cases' clusters."""
    cases = result.cases
    if isinstance(cases, CaseColumns):
        # Read from the columns: NaN where missing already, no case made.
        ids = list(cases.ids)
        values = {metric.metric: cases.metric_column(metric).tolist() for metric in result.metrics}
        clusters = [cases.cluster(i) for i in range(len(cases))]
    else:
        ids = [case.id for case in cases]
        values = {
            metric.metric: [_number(value) for value in values_by_case(result, metric).values()]
            for metric in result.metrics
        }
        clusters = [case.cluster for case in cases]
    labels: dict[str, int] = {}
    codes = [
        # An empty label is no cluster, as everywhere else.
        labels.setdefault(cluster, len(labels)) if cluster else NO_CLUSTER
        for cluster in clusters
    ]
    if not labels:
        return ColumnLists(ids, values)
    return ColumnLists(ids, values, codes, list(labels))


def _number(value: Any) -> float:
    return float("nan") if value is None else float(value)
