"""Two recorded runs' per-case values, as the engine's columns, paired by case id.

A comparison needs, per metric, one number per case on each side. A run keeps its
columns when it concludes (`RunValueColumns`, written by the recording), so a first
comparison reads two rows. A run recorded before they were kept is read from its
verdicts: the case ids and one `(case_id, value)` column per criterion (the
sub-scores' JSON only for runs that have sub-scores), still a fraction of reading
whole results. Same figures as `compare_runs` on the whole results (tested).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from django.db import connections
from django.db.models import QuerySet

import oloproof_core as engine
from metrics.models import CaseVerdict, MetricEstimate
from metrics.selectors import run_metric_estimates, runs_value_columns
from oloproof_core.results.compare import (
    NO_CLUSTER,
    PairedValues,
    ValueColumns,
    paired_columns,
    values_placed,
)
from runs.models import CaseResult, DatasetCase, Run
from runs.selectors.results import metric_dict

FloatArray = np.ndarray[Any, np.dtype[np.float64]]


def runs_paired_values(*, baseline: Run, candidate: Run) -> PairedValues:
    """Both runs' values of every shared metric over the union of their cases."""
    before, after = _estimates(baseline), _estimates(candidate)
    shared = [row for name, row in after.items() if name in before]
    stored = runs_value_columns(run_ids=[baseline.pk, candidate.pk])
    columns = []
    for run in (baseline, candidate):
        found = stored.get(run.pk)
        if found is None or any(row.metric not in found.values for row in shared):
            found = _columns_from_verdicts(run, shared)
        columns.append(found)
    return paired_columns(
        _metrics_only(baseline, before.values()),
        _metrics_only(candidate, after.values()),
        columns[0],
        columns[1],
    )


def _columns_from_verdicts(run: Run, metrics: list[MetricEstimate]) -> ValueColumns:
    """A run without stored columns (recorded before they were kept): read its verdicts."""
    ids = _case_ids(run)
    index = {case_id: position for position, case_id in enumerate(ids)}
    values = _values(run, metrics, index)
    labels = _cluster_labels(run)
    if not any(labels.get(case_id) for case_id in ids):
        return ValueColumns(ids, values)
    names: dict[str, int] = {}
    codes = [
        names.setdefault(labels[case_id], len(names)) if labels.get(case_id) else NO_CLUSTER
        for case_id in ids
    ]
    return ValueColumns(ids, values, np.array(codes, np.intp), list(names))


def _case_ids(run: Run) -> list[str]:
    rows = CaseResult.objects.filter(run=run).order_by("position", "id")
    return [case_id for (case_id,) in _fetched(rows.values_list("case_id"))]


def _estimates(run: Run) -> dict[str, MetricEstimate]:
    return {row.metric: row for row in run_metric_estimates(run_id=run.pk)}


def _metrics_only(run: Run, rows: Any) -> engine.Result:
    """The run as a result without cases: its estimates and the release's label."""
    system = run.release.system.name if run.release is not None else "unnamed"
    version = run.release.version if run.release is not None else ""
    return engine.result_from_dict(
        {
            "run_id": str(run.pk),
            "provenance": {
                "system": {"name": system, "version": version},
                # How many times each case ran: the comparison puts repeats back together.
                "repeats": (run.provenance or {}).get("repeats"),
            },
            "metrics": [metric_dict(row) for row in rows],
            "cases": [],
        }
    )


def _values(
    run: Run, metrics: list[MetricEstimate], index: dict[str, int]
) -> dict[str, FloatArray]:
    """Per metric, the run's value on each of its cases (`index`: id -> place; NaN missing)."""
    values: dict[str, FloatArray] = {}
    for criterion in dict.fromkeys(row.criterion for row in metrics):
        subs = [row.metric for row in metrics if row.criterion == criterion and row.is_sub_score]
        verdicts = CaseVerdict.objects.filter(run_id=run.pk, criterion=criterion)
        if not subs:
            ids, numbers = _columns(_fetched(verdicts.values_list("case_id", "value")), 2)
            values[criterion] = _placed(ids, numbers, index)
            continue
        ids, numbers, scores = _columns(verdicts.values_list("case_id", "value", "scores"), 3)
        if any(row.metric == criterion for row in metrics):
            values[criterion] = _placed(ids, numbers, index)
        for metric in subs:
            name = metric[len(criterion) + 1 :]
            picked = [
                None if value is None else (given or {}).get(name)
                for value, given in zip(numbers, scores, strict=True)
            ]
            values[metric] = _placed(ids, picked, index)
    return values


def _fetched(query: QuerySet[Any]) -> list[tuple[Any, ...]]:
    """All rows of a query of plain columns in one fetch (the ORM fetches 100 at a time)."""
    sql, params = query.query.sql_with_params()
    with connections[query.db].cursor() as cursor:
        cursor.execute(sql, params)
        return cursor.fetchall()


def _columns(rows: Any, width: int) -> list[list[Any]]:
    """Rows turned into `width` columns."""
    rows = list(rows)
    return [[row[column] for row in rows] for column in range(width)]


def _placed(ids: list[str], numbers: list[Any], index: dict[str, int]) -> FloatArray:
    """Values (None: missing) at their case's place; np.array turns None into NaN in C."""
    found = np.array(numbers, dtype=np.float64) if numbers else np.zeros(0)
    return values_placed(ids, found, index)


def _cluster_labels(run: Run) -> dict[str, str]:
    """Case id -> cluster label for the run's dataset's clustered cases."""
    if run.dataset_id is None:
        return {}
    rows = DatasetCase.objects.filter(dataset_id=run.dataset_id, cluster__isnull=False)
    return dict(_fetched(rows.values_list("case_id", "cluster")))
