"""Writes to the metrics app: the verdict cache, evaluators, per-case verdicts, estimates.

Every write is a bulk write in fixed-size batches; none issues a query per case.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import oloproof_core as engine
from metrics.batching import batches
from metrics.models import CachedVerdict, CaseVerdict, Evaluator, MetricEstimate

_EVALUATOR_FIELDS = ("kind", "source", "reads", "parameters", "value_type", "score_range")
_ESTIMATE_FIELDS = (
    "evaluator",
    "criterion",
    "estimate",
    "lower",
    "upper",
    "method",
    "confidence",
    "n_observed",
    "n_missing",
    "value_type",
    "score_range",
    "position",
    "n_clusters",
    "warning",
)


def cached_verdicts_put(*, entries: Sequence[engine.CacheEntry], batch_size: int = 2000) -> None:
    """Cache successful verdicts; a key already cached (by this or another process) is kept."""
    for batch in batches(entries, batch_size):
        CachedVerdict.objects.bulk_create(
            [
                CachedVerdict(
                    key=entry.key,
                    evaluator_version=entry.evaluator_version,
                    criterion=entry.criterion,
                    value=entry.verdict.value,
                    feedback=entry.verdict.feedback,
                    scores=dict(entry.verdict.scores),
                )
                for entry in batch
                if entry.verdict.value is not None
            ],
            ignore_conflicts=True,
        )


def evaluators_ensure(*, descriptions: Sequence[Mapping[str, Any]]) -> dict[str, Evaluator]:
    """The Evaluator rows for the engine's evaluator descriptions, created where new.

    Returns them by criterion. Two queries however many evaluators a run has (three
    when some are new).
    """
    wanted = {(item["criterion"], item["version"]): item for item in descriptions}
    if not wanted:
        return {}
    criteria = {criterion for criterion, _ in wanted}
    versions = {version for _, version in wanted}

    def existing() -> dict[tuple[str, str], Evaluator]:
        rows = Evaluator.objects.filter(criterion__in=criteria, version__in=versions)
        return {(row.criterion, row.version): row for row in rows}

    found = existing()
    missing = [item for pair, item in wanted.items() if pair not in found]
    if missing:
        Evaluator.objects.bulk_create(
            [
                Evaluator(
                    criterion=item["criterion"],
                    version=item["version"],
                    **{name: _evaluator_field(item, name) for name in _EVALUATOR_FIELDS},
                )
                for item in missing
            ],
            ignore_conflicts=True,
        )
        found = existing()
    return {criterion: found[(criterion, version)] for criterion, version in wanted}


def _evaluator_field(item: Mapping[str, Any], name: str) -> Any:
    value = item.get(name)
    if name in ("reads", "score_range"):
        return list(value or [])
    if name == "parameters":
        return dict(value or {})
    if name == "kind":
        return str(value or "")
    return value


def case_verdicts_create(
    *, run_id: int, cases: Iterable[engine.CaseResult], batch_size: int
) -> int:
    """Record every verdict of every case; a verdict already recorded for the run is kept."""
    written = 0
    for batch in batches(cases, batch_size):
        rows = [
            CaseVerdict(
                run_id=run_id,
                case_id=case.id,
                criterion=criterion,
                value=verdict.value,
                feedback=verdict.feedback,
                scores=dict(verdict.scores),
                error=verdict.error,
                error_traceback=verdict.traceback,
                cached=verdict.cached,
            )
            for case in batch
            for criterion, verdict in case.verdicts.items()
        ]
        CaseVerdict.objects.bulk_create(rows, ignore_conflicts=True)
        written += len(rows)
    return written


def metric_estimates_create(
    *,
    run_id: int,
    metrics: Sequence[engine.MetricEstimate],
    evaluators: Mapping[str, Evaluator],
) -> list[MetricEstimate]:
    rows = [
        MetricEstimate(
            run_id=run_id,
            evaluator=evaluators.get(metric.criterion),
            metric=metric.metric,
            criterion=metric.criterion,
            estimate=metric.estimate,
            lower=metric.interval.lower,
            upper=metric.interval.upper,
            method=metric.method,
            confidence=metric.confidence,
            n_observed=metric.n_observed,
            n_missing=metric.n_missing,
            value_type=metric.value_type,
            score_range=list(metric.score_range),
            position=position,
            n_clusters=metric.n_clusters,
            warning=metric.warning or "",
        )
        for position, metric in enumerate(metrics)
    ]
    # Upsert: finalising a run twice (a retried task) leaves one estimate per metric.
    return MetricEstimate.objects.bulk_create(
        rows,
        update_conflicts=True,
        unique_fields=["run", "metric"],
        update_fields=[*_ESTIMATE_FIELDS],
    )
