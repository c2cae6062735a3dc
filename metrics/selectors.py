"""Reads from the metrics app: the verdict cache and what a run measured."""

from __future__ import annotations

import json
from collections.abc import Collection, Iterable
from typing import TYPE_CHECKING, Any

from django.db.models import QuerySet

from metrics.batching import KEY_BATCH, batches
from metrics.models import CachedVerdict, CaseVerdict, Evaluator, MetricEstimate, RunValueColumns
from metrics.value_columns import value_columns_decode
from oloproof_core import Verdict

if TYPE_CHECKING:
    from oloproof_core.results.compare import ValueColumns


def cached_verdicts_get(*, keys: Collection[str]) -> dict[str, Verdict]:
    """The cached verdicts among `keys`: one query per 900 keys, whatever the run's size."""
    found: dict[str, Verdict] = {}
    for batch in batches(dict.fromkeys(keys), KEY_BATCH):
        rows = CachedVerdict.objects.filter(key__in=batch).values_list(
            "key", "value", "feedback", "scores"
        )
        for key, value, feedback, scores in rows:
            found[key] = Verdict.from_cache(
                {"value": value, "feedback": feedback, "scores": scores}
            )
    return found


def runs_value_columns(*, run_ids: Collection[int]) -> dict[int, ValueColumns]:
    """The stored value columns of those of `run_ids` that have them, in one query.

    Runs of one dataset usually list the same cases in the same order: their ids are
    parsed once and shared, which also lets the comparison skip aligning them.
    """
    rows = RunValueColumns.objects.filter(run_id__in=list(run_ids)).values_list(
        "run_id", "case_ids", "metrics", "values", "cluster_codes", "cluster_labels", "read_order"
    )
    parsed: dict[str, list[str]] = {}
    found: dict[int, ValueColumns] = {}
    for run_id, case_ids, metrics, values, codes, labels, order in rows:
        if case_ids not in parsed:
            parsed[case_ids] = json.loads(case_ids)
        found[run_id] = value_columns_decode(
            case_ids=case_ids,
            metrics=metrics,
            values=values,
            cluster_codes=codes,
            cluster_labels=labels,
            read_order=order,
            ids=parsed[case_ids],
        )
    return found


def run_metric_estimates(*, run_id: int) -> QuerySet[MetricEstimate]:
    return MetricEstimate.objects.filter(run_id=run_id).order_by("position", "id")


def case_verdicts_by_case(*, run_id: int, case_ids: Iterable[str]) -> dict[str, list[CaseVerdict]]:
    """Every verdict of the given cases of a run, grouped by case id (batched lookups)."""
    grouped: dict[str, list[CaseVerdict]] = {}
    for batch in batches(dict.fromkeys(case_ids), KEY_BATCH):
        rows = CaseVerdict.objects.filter(run_id=run_id, case_id__in=batch).order_by("id")
        for verdict in rows:
            grouped.setdefault(verdict.case_id, []).append(verdict)
    return grouped


def evaluators_list(*, criterion: str | None = None, runs: QuerySet[Any]) -> QuerySet[Evaluator]:
    """Evaluators that judged any of `runs` (the caller's visible runs), by criterion."""
    used = MetricEstimate.objects.filter(run__in=runs).values("evaluator_id")
    query = Evaluator.objects.filter(pk__in=used)
    return query.filter(criterion=criterion) if criterion else query
