"""Writes to the metrics app: the verdict cache, evaluators, per-case verdicts, estimates,
and a concluded run's value columns.

Every write is a bulk write in fixed-size batches; none issues a query per case.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from operator import attrgetter
from typing import Any

from django.db import connection
from django.utils import timezone

import oloproof_core as engine
from metrics.batching import first_of_each, numbered_first_of_each
from metrics.bulk_rows import large_bytes_write, large_row_insert, rows_insert
from metrics.models import CachedVerdict, CaseVerdict, Evaluator, MetricEstimate, RunValueColumns
from metrics.value_columns import BlobParts, value_columns_encode

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
    """Cache successful verdicts; a key already cached (by this or another process) is kept.

    Each key is written once, however many entries share it.
    """
    now = timezone.now()
    rows_insert(
        model=CachedVerdict,
        columns=_CACHED_VERDICT_COLUMNS,
        rows=(
            (
                entry.key,
                entry.evaluator_version,
                entry.criterion,
                entry.verdict.value,
                entry.verdict.feedback,
                dict(entry.verdict.scores),
                now,
            )
            for entry in first_of_each(entries, key=lambda entry: entry.key)
            if entry.verdict.value is not None
        ),
        batch_size=batch_size,
    )


_CACHED_VERDICT_COLUMNS = (
    "key",
    "evaluator_version",
    "criterion",
    "value",
    "feedback",
    "scores",
    "created_at",
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
    *, run_id: int, cases: Sequence[engine.CaseResult], batch_size: int, new_run: bool = False
) -> int:
    """Record every verdict of every case; a verdict already recorded for the run is kept.

    `new_run`: the run was created in this transaction, so no verdict can collide.
    """
    return rows_insert(
        model=CaseVerdict,
        columns=_CASE_VERDICT_COLUMNS,
        rows=(
            (
                run_id,
                case.id,
                criterion,
                verdict.value,
                verdict.feedback,
                dict(verdict.scores),
                verdict.error,
                verdict.traceback,
                verdict.cached,
            )
            # A repeated case id keeps its first verdicts.
            for _, case in numbered_first_of_each(cases, key=_CASE_ID)
            for criterion, verdict in case.verdicts.items()
        ),
        ignore_conflicts=not new_run,
        batch_size=batch_size,
    )


_CASE_ID = attrgetter("id")
_CASE_VERDICT_COLUMNS = (
    "run_id",
    "case_id",
    "criterion",
    "value",
    "feedback",
    "scores",
    "error",
    "error_traceback",
    "cached",
)


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


def run_value_columns_put(
    *, run_id: int, result: engine.Result, case_ids_query: tuple[str, list[Any]] | None = None
) -> None:
    """Keep a concluded run's value columns, replacing those of an earlier conclusion.

    A result without cases (a run that recorded none) keeps none: its comparisons
    read the verdicts instead. When the result's case ids are the store's
    (`engine.DeferredIds`), `case_ids_query` selects them as one JSON list, and the
    database writes them in without the process ever holding them.
    """
    if not result.cases:
        RunValueColumns.objects.filter(run_id=run_id).delete()
        return
    fields = value_columns_encode(result)
    ids_from_query = fields["case_ids"] is None
    if ids_from_query:
        if case_ids_query is None:
            raise ValueError("the run's case ids are in the store: pass the query that reads them")
        fields["case_ids"] = "[]"
    parted = {name: value for name, value in fields.items() if isinstance(value, BlobParts)}
    fields.update(dict.fromkeys(parted, b""))
    # Replaced whole (a continued run's next conclusion), in the caller's transaction.
    RunValueColumns.objects.filter(run_id=run_id).delete()
    large_row_insert(
        model=RunValueColumns, columns=["run", *fields], row=[run_id, *fields.values()]
    )
    for name, blob in parted.items():
        large_bytes_write(
            model=RunValueColumns, pk=run_id, column=name, parts=blob.parts, total=blob.total
        )
    if ids_from_query and case_ids_query is not None:
        sql, params = case_ids_query
        table = connection.ops.quote_name(RunValueColumns._meta.db_table)
        with connection.cursor() as cursor:
            cursor.execute(
                f"UPDATE {table} SET case_ids = ({sql}) WHERE run_id = %s", [*params, run_id]
            )
