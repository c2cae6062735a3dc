"""Two recorded runs' per-case values, read as columns straight into the engine's arrays.

A comparison needs, per metric, one number per case on each side. Reading whole
results (100,000 case objects with their verdicts, JSON decoded) costs seconds;
reading the case ids and one `(case_id, value)` column per criterion costs a
fraction of that. The sub-scores' JSON column is read only for runs that have
sub-scores. Same figures as `compare_runs` on the whole results (tested).
"""

from __future__ import annotations

from itertools import repeat
from typing import Any

import numpy as np
from django.db import connections
from django.db.models import QuerySet

import oloproof_core as engine
from metrics.models import CaseVerdict, MetricEstimate
from metrics.selectors import run_metric_estimates
from oloproof_core.compare import PairedValues
from runs.models import CaseResult, DatasetCase, Run
from runs.selectors.results import metric_dict

FloatArray = np.ndarray[Any, np.dtype[np.float64]]


def runs_paired_values(*, baseline: Run, candidate: Run) -> PairedValues:
    """Both runs' values of every shared metric over the union of their cases."""
    baseline_ids, candidate_ids = _case_ids(baseline), _case_ids(candidate)
    union = list(dict.fromkeys([*baseline_ids, *candidate_ids]))
    index = {case_id: position for position, case_id in enumerate(union)}
    before, after = _estimates(baseline), _estimates(candidate)
    shared = [row for name, row in after.items() if name in before]
    return PairedValues(
        baseline=_metrics_only(baseline, before.values()),
        candidate=_metrics_only(candidate, after.values()),
        ids=union,
        baseline_ids=baseline_ids,
        candidate_ids=candidate_ids,
        clusters=_clusters(candidate, union),
        baseline_values=_values(baseline, shared, index, baseline_ids),
        candidate_values=_values(candidate, shared, index, candidate_ids),
    )


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
            "provenance": {"system": {"name": system, "version": version}},
            "metrics": [metric_dict(row) for row in rows],
            "cases": [],
        }
    )


def _values(
    run: Run, metrics: list[MetricEstimate], index: dict[str, int], case_ids: list[str]
) -> dict[str, FloatArray]:
    """Per metric, the run's value on each case of the union (NaN where missing)."""
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
    """Values set at their case's place in the union; every other place NaN."""
    # map() and np.array(None -> NaN) keep the per-row work in C.
    positions = np.fromiter(map(index.get, ids, repeat(-1, len(ids))), np.intp, len(ids))
    found = np.array(numbers, dtype=np.float64) if numbers else np.zeros(0)
    known = positions >= 0
    column = np.full(len(index), np.nan)
    column[positions[known]] = found[known]
    return column


def _clusters(run: Run, union: list[str]) -> list[str] | None:
    """Each case's cluster (both runs share the dataset), or None when none has one."""
    if run.dataset_id is None:
        return None
    rows = DatasetCase.objects.filter(dataset_id=run.dataset_id, cluster__isnull=False)
    labels = dict(_fetched(rows.values_list("case_id", "cluster")))
    if not any(labels.get(case_id) for case_id in union):
        return None
    return [labels.get(case_id) or f"case:{case_id}" for case_id in union]
