"""A recorded run's cases as the narrow columns its conclusion reads (`engine.CaseColumns`).

Finalising a run on the workers reads, per case, its id, whether the system failed,
its cluster, each criterion's value and sub-scores and its model calls (summed by
role as they stream by), in one streamed query over the three tables joined in the
database: a million-case run's conclusion holds its ids and a few bytes per case and
metric, never its inputs, outputs or feedback (`run_result` reads those).
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from typing import Any

from django.db import connection, transaction

import oloproof_core as engine
from metrics.models import CaseVerdict
from runs.models import CaseResult, DatasetCase, Run

_BLOCK = 5000
"""Rows fetched per round trip while streaming."""


def run_case_columns(*, run: Run, criteria: Sequence[str]) -> engine.CaseColumns:
    """The run's cases in its order (position, then id), with the verdicts of `criteria`."""
    builder = engine.CaseColumnsBuilder(criteria)
    width = len(criteria)
    for row in _rows(run, criteria):
        case_id, error_type, calls, cluster = row[:4]
        builder.add(
            case_id,
            cluster=cluster,
            error_type=error_type,
            verdicts=[(row[4 + 2 * i], _json(row[5 + 2 * i], "{}")) for i in range(width)],
            model_calls=_json(calls, "[]") or (),
        )
    return builder.build()


def _rows(run: Run, criteria: Sequence[str]) -> Iterator[tuple[Any, ...]]:
    quote = connection.ops.quote_name
    cases, verdicts = quote(CaseResult._meta.db_table), quote(CaseVerdict._meta.db_table)
    selected = ["r.case_id", "r.error_type", "r.model_calls"]
    joins: list[str] = []
    params: list[Any] = []
    if run.dataset_id is None:
        selected.append("NULL")
    else:
        selected.append("d.cluster")
        joins.append(
            f"LEFT JOIN {quote(DatasetCase._meta.db_table)} d "
            "ON d.dataset_id = %s AND d.case_id = r.case_id"
        )
        params.append(run.dataset_id)
    for index, criterion in enumerate(criteria):
        selected += [f"v{index}.value", f"v{index}.scores"]
        joins.append(
            f"LEFT JOIN {verdicts} v{index} ON v{index}.run_id = r.run_id "
            f"AND v{index}.case_id = r.case_id AND v{index}.criterion = %s"
        )
        params.append(criterion)
    sql = (
        f"SELECT {', '.join(selected)} FROM {cases} r {' '.join(joins)} "
        "WHERE r.run_id = %s ORDER BY r.position, r.id"
    )
    with transaction.atomic():
        if connection.vendor == "postgresql":
            # Right after a run's last chunk its tables' statistics still say they are
            # nearly empty; PostgreSQL then joins by nested loops that rescan the verdicts
            # for every case (minutes at 100,000 cases). Hash joins take a second.
            with connection.cursor() as settings:
                settings.execute("SET LOCAL enable_nestloop = off")
        # A server-side cursor on PostgreSQL: rows arrive a block at a time.
        with connection.chunked_cursor() as cursor:
            cursor.execute(sql, [*params, run.pk])
            while block := cursor.fetchmany(_BLOCK):
                yield from block


def _json(value: Any, empty: str) -> Any:
    """A JSON column as read by a plain cursor: text on SQLite (and from PostgreSQL through
    Django's connection), already decoded by some drivers; None for SQL NULL."""
    if value is None or value == empty:
        return None
    return json.loads(value) if isinstance(value, str) else value
