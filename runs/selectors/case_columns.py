"""A recorded run's cases as the narrow columns its conclusion reads (`engine.CaseColumns`).

Finalising a run on the workers reads, per case, its id, whether the system failed,
its cluster, each criterion's value and sub-scores and its model calls (summed by
role as they stream by), in one streamed query over the three tables joined in the
database: a million-case run's conclusion holds its ids and a few bytes per case and
metric, never its inputs, outputs or feedback (`run_result` reads those).

Nor does it hold the ids: each id's digest prefix fixes the statistics' reading order
as the rows stream by, the ids stay in the database (`engine.DeferredIds`, read only
for a comparison by case, clusters or a sequential look), and the value columns'
list of ids is built by the database itself (`case_ids_json_sql`).
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


_CASE_ORDER = "ORDER BY r.position, r.id"


def run_case_columns(*, run: Run, criteria: Sequence[str]) -> engine.CaseColumns:
    """The run's cases in its order (position, then id), with the verdicts of `criteria`."""
    builder = engine.CaseColumnsBuilder(criteria, keep_ids=False)
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
    return builder.build(engine.DeferredIds(lambda: _case_ids(run.pk), builder.count))


def _case_ids(run_id: int) -> list[str]:
    cases = connection.ops.quote_name(CaseResult._meta.db_table)
    sql = f"SELECT r.case_id FROM {cases} r WHERE r.run_id = %s {_CASE_ORDER}"
    with transaction.atomic(), connection.chunked_cursor() as cursor:
        cursor.execute(sql, [run_id])
        ids: list[str] = []
        while block := cursor.fetchmany(_BLOCK):
            ids += (row[0] for row in block)
        return ids


def stored_case_ids_query(*, run_id: int, result: engine.Result) -> tuple[str, list[Any]] | None:
    """`case_ids_json_sql` when `result`'s cases are columns whose ids are still in the
    store (`run_case_columns`), None when the result holds its ids."""
    cases = result.cases
    if isinstance(cases, engine.CaseColumns) and isinstance(cases.ids, engine.DeferredIds):
        return case_ids_json_sql(run_id)
    return None


def case_ids_json_sql(run_id: int) -> tuple[str, list[Any]]:
    """A query whose one value is the run's case ids in its order as a JSON list, built
    by the database: a million ids never pass through the process as strings."""
    cases = connection.ops.quote_name(CaseResult._meta.db_table)
    if connection.vendor == "postgresql":
        aggregate = (
            "SELECT COALESCE(json_agg(r.case_id ORDER BY r.position, r.id), '[]')::text "
            f"FROM {cases} r WHERE r.run_id = %s"
        )
    else:  # SQLite aggregates the rows in the order its subquery gives them
        aggregate = (
            f"SELECT json_group_array(case_id) FROM (SELECT r.case_id FROM {cases} r "
            f"WHERE r.run_id = %s {_CASE_ORDER})"
        )
    return aggregate, [run_id]


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
        f"WHERE r.run_id = %s {_CASE_ORDER}"
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
            while True:
                block = cursor.fetchmany(_BLOCK)
                if not block:
                    return
                yield from block
                del block  # before the next fetch: one block held at a time, not two


def _json(value: Any, empty: str) -> Any:
    """A JSON column as read by a plain cursor: text on SQLite (and from PostgreSQL through
    Django's connection), already decoded by some drivers; None for SQL NULL."""
    if value is None or value == empty:
        return None
    return json.loads(value) if isinstance(value, str) else value
