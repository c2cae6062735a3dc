"""Reads from the metrics app: the verdict cache and what a run measured."""

from __future__ import annotations

from collections.abc import Collection, Iterable
from typing import Any

from django.db.models import QuerySet

from metrics.batching import KEY_BATCH, batches
from metrics.models import CachedVerdict, CaseVerdict, Evaluator, MetricEstimate
from oloproof_core import Verdict


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
