"""SQLite's search index rows: what each case result's row holds, and adding the rows
of case results just recorded.

The index is one contentless FTS5 table, `runs_caseresult_search` (migration 0009): a
row per case result with its dataset row's input and expected value beside its own
output and error. Deleting or changing a case result updates its row through
triggers. New case results are added here, by the recording that wrote them, in one
statement per batch: a trigger per inserted row cost about 40 µs a case (0.4 s of a
10,000-case run's recording), one INSERT … SELECT about 5 µs.

PostgreSQL needs none of this: its generated `tsvector` columns are filled by the
database itself.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from django.db import connection

TABLE = "runs_caseresult_search"
COLUMNS = "input, expected, output, error"
JSON_WORDS = (
    "(SELECT substr(group_concat(atom, ' '), 1, 50000) FROM json_tree({doc}) "
    "WHERE type IN ('text', 'integer', 'real'))"
)
"""The string and number values of a JSON document (not its keys), at most 50,000 characters."""


def json_words(doc: str) -> str:
    return JSON_WORDS.format(doc=doc)


def row_values(row: str, base: str = "(SELECT 1)") -> str:
    """A SELECT of a case result's index row: its id, its dataset row's input and
    expected value, its own output and error. The dataset row is found through the run;
    datasets never change, so the same words come back when a row is deleted (which a
    contentless table needs)."""
    return (
        f"SELECT {row}.id, {json_words('dataset_row.input')}, "
        f"{json_words('dataset_row.expected')}, {json_words(row + '.output')}, "
        f"substr({row}.error_type || ' ' || {row}.error_message, 1, 50000) "
        f"FROM {base} LEFT JOIN runs_run AS its_run ON its_run.id = {row}.run_id "
        "LEFT JOIN runs_datasetcase AS dataset_row ON dataset_row.dataset_id = its_run.dataset_id "
        f"AND dataset_row.case_id = {row}.case_id"
    )


INSERT_ONE = f"INSERT INTO {TABLE}(rowid, {COLUMNS}) {row_values('new')};"
"""A trigger's statement adding the row of the case result `new`."""
DELETE_ONE = (
    f"INSERT INTO {TABLE}({TABLE}, rowid, {COLUMNS}) SELECT 'delete', * FROM ({row_values('old')});"
)
"""A trigger's statement removing the row of the case result `old` (migration 0009)."""
DELETE_INDEXED = (
    DELETE_ONE.removesuffix(";") + f" WHERE EXISTS (SELECT 1 FROM {TABLE} WHERE rowid = old.id);"
)
"""`DELETE_ONE` for a row the index holds: a contentless table corrupts on any other."""
_ADD = (
    f"INSERT INTO {TABLE}(rowid, {COLUMNS}) "
    + row_values("result", base="runs_caseresult AS result")
    + " WHERE result.run_id = %s"
)
_NOT_INDEXED = f" AND NOT EXISTS (SELECT 1 FROM {TABLE} WHERE {TABLE}.rowid = result.id)"
_OF_CASES = " AND result.case_id IN (SELECT value FROM json_each(%s))"


def search_rows_add(
    *, run_id: int, case_ids: Sequence[str] | None = None, new_run: bool = False
) -> None:
    """SQLite: index the run's case results (those of `case_ids` only, when given)
    that the search index does not hold yet; `new_run`: the run was created in this
    transaction, so it holds none. Nothing to do on PostgreSQL."""
    if connection.vendor != "sqlite":
        return
    sql = _ADD
    params: list[Any] = [run_id]
    if not new_run:
        sql += _NOT_INDEXED
    if case_ids is not None:
        sql += _OF_CASES
        params.append(json.dumps(list(case_ids)))
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
