"""A recorded run's cases as the narrow columns its conclusion reads (`engine.CaseColumns`).

Finalising a run on the workers reads, per case, its id, whether the system failed,
its cluster, each criterion's value and sub-scores, its model calls (summed by role as
they stream by) and its measured latency and cost, in one streamed query over the three
tables joined in the database: a million-case run's conclusion holds its ids and a few
bytes per case and metric, never its inputs, outputs or feedback (`run_result` reads
those).

Nor does it hold the rows' values: they go to temporary files as they stream by
(`engine.SpilledColumns`), and the score metrics are streamed once more, sorted by the
database in the statistics' reading order (each id's SHA-256 digest), for their betting
intervals to read from a file a block at a time. The ids stay in the database
(`engine.DeferredIds`, read only for a comparison by case, clusters or a sequential
look), and the value columns' list of ids is built by the database itself
(`case_ids_json_sql`).
"""

from __future__ import annotations

import json
from collections.abc import Collection, Iterator, Sequence
from typing import Any

from django.db import connection, transaction

import oloproof_core as engine
from metrics.models import CaseVerdict
from runs.models import CaseResult, DatasetCase, Run
from runs.selectors._sqlite_digest import SQLITE_DIGEST

_BLOCK = 5000
"""Rows fetched per round trip while streaming."""


_CASE_ORDER = "ORDER BY r.position, r.id"


def run_case_columns(
    *, run: Run, criteria: Sequence[str], scored: Collection[str] = ()
) -> engine.CaseColumns:
    """The run's cases in its order (position, then id), with the verdicts of `criteria`,
    kept in files (`engine.SpilledColumns`); `scored` criteria (and every sub-score) are
    read a second time in the statistics' reading order, for their betting intervals."""
    builder = engine.CaseColumnsBuilder(criteria, spill=True)
    width = len(criteria)
    for row in _streamed(*_rows_sql(run, criteria)):
        case_id, error_type, calls, cluster, latency_ms, cost_usd = row[:6]
        builder.add(
            case_id,
            cluster=cluster,
            error_type=error_type,
            verdicts=[(row[6 + 2 * i], _json(row[7 + 2 * i], "{}")) for i in range(width)],
            model_calls=_json(calls, "[]") or (),
            latency_ms=latency_ms,
            cost_usd=cost_usd,
        )
    sub_scores = builder.sub_scores()
    read = [c for c in criteria if c in scored or sub_scores.get(c)]
    reading = engine.ReadingOrderBuilder(read, whole=scored, sub_scores=sub_scores)
    for row in _streamed(*_reading_sql(run.pk, read)):
        reading.add(
            row[0], [(row[1 + 2 * i], _json(row[2 + 2 * i], "{}")) for i in range(len(read))]
        )
    ids = engine.DeferredIds(lambda: _case_ids(run.pk), builder.count)
    return builder.build(ids, reading.build())


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


def _rows_sql(run: Run, criteria: Sequence[str]) -> tuple[str, list[Any]]:
    """Each case in the run's order: id, error, model calls, cluster, latency, cost, then
    each criterion's value and sub-scores."""
    quote = connection.ops.quote_name
    cases = quote(CaseResult._meta.db_table)
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
    selected += ["r.latency_ms", "r.cost_usd"]
    verdicts, verdict_params = _verdict_joins("r", criteria)
    sql = (
        f"SELECT {', '.join([*selected, *verdicts[0]])} FROM {cases} r "
        f"{' '.join([*joins, *verdicts[1]])} WHERE r.run_id = %s {_CASE_ORDER}"
    )
    return sql, [*params, *verdict_params, run.pk]


def _reading_sql(run_id: int, criteria: Sequence[str]) -> tuple[str, list[Any]]:
    """Each case in reading order (by its id's SHA-256 digest, as `stats.key_order`):
    its place in the run's order, then each criterion's value and sub-scores."""
    cases = connection.ops.quote_name(CaseResult._meta.db_table)
    if connection.vendor == "postgresql":
        digest = "sha256(convert_to(o.case_id, 'UTF8'))"
    else:
        digest = f"{SQLITE_DIGEST}(o.case_id)"
    verdicts, params = _verdict_joins("o", criteria)
    places = (
        "SELECT r.run_id, r.case_id, "
        f"ROW_NUMBER() OVER ({_CASE_ORDER}) - 1 AS place FROM {cases} r WHERE r.run_id = %s"
    )
    sql = (
        f"SELECT {', '.join(['o.place', *verdicts[0]])} FROM ({places}) o "
        f"{' '.join(verdicts[1])} ORDER BY {digest}"
    )
    return sql, [run_id, *params]


def _verdict_joins(
    cases: str, criteria: Sequence[str]
) -> tuple[tuple[list[str], list[str]], list[Any]]:
    """(columns selected, joins) reading each criterion's verdict, and their parameters."""
    table = connection.ops.quote_name(CaseVerdict._meta.db_table)
    selected: list[str] = []
    joins: list[str] = []
    for index in range(len(criteria)):
        selected += [f"v{index}.value", f"v{index}.scores"]
        joins.append(
            f"LEFT JOIN {table} v{index} ON v{index}.run_id = {cases}.run_id "
            f"AND v{index}.case_id = {cases}.case_id AND v{index}.criterion = %s"
        )
    return (selected, joins), list(criteria)


def _streamed(sql: str, params: list[Any]) -> Iterator[tuple[Any, ...]]:
    with transaction.atomic():
        if connection.vendor == "postgresql":
            # Right after a run's last chunk its tables' statistics still say they are
            # nearly empty; PostgreSQL then joins by nested loops that rescan the verdicts
            # for every case (minutes at 100,000 cases). Hash joins take a second.
            with connection.cursor() as settings:
                settings.execute("SET LOCAL enable_nestloop = off")
        # A server-side cursor on PostgreSQL: rows arrive a block at a time.
        with connection.chunked_cursor() as cursor:
            cursor.execute(sql, params)
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
