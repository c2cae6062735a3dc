"""Inserting many rows of one table at the speed of the database driver.

Django's `bulk_create` builds a model instance per row and compiles every field of
every row into SQL in Python; for a 100,000-case run that costs several times what
the database spends. Here rows arrive as plain tuples, columns are adapted once per
value with the same conversion Django applies (JSON text, SQL NULL for None,
datetimes as the backend stores them), and the rows go out in bounded batches:
`executemany` of one prepared INSERT on SQLite, `COPY` on PostgreSQL. The table's
writing module calls this; the rule "one writer per table" is about who decides what
is written, not how the bytes travel.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from django.db import connection, models, transaction

import oloproof_core as engine
from metrics.batching import batches

ROWS_PER_BATCH = 2000
"""Rows held in memory at once between the caller's generator and the driver."""

Adapter = Callable[[Any], Any]


def rows_insert(
    *,
    model: type[models.Model],
    columns: Sequence[str],
    rows: Iterable[Sequence[Any]],
    ignore_conflicts: bool = True,
    batch_size: int = ROWS_PER_BATCH,
) -> int:
    """Insert `rows` (tuples in the order of `columns`, field names) into `model`'s table.

    With `ignore_conflicts` a row that collides with a unique constraint is skipped, as
    `bulk_create(ignore_conflicts=True)` does; without it the caller promises the rows
    are new (a run created in the same transaction), which lets PostgreSQL copy them
    straight into the table. Returns how many rows were sent.
    """
    fields = [model._meta.get_field(name) for name in columns]
    table = model._meta.db_table
    names = [
        str(getattr(field, "column", name)) for field, name in zip(fields, columns, strict=True)
    ]
    adapters = [
        (index, adapt)
        for index, adapt in enumerate(_adapter(field) for field in fields)
        if adapt is not None
    ]
    adapted = (_adapt(row, adapters) for row in rows)
    if connection.vendor == "postgresql":
        return _copy_postgresql(table, names, adapted, ignore_conflicts)
    return _insert_many(table, names, adapted, ignore_conflicts, batch_size)


def large_row_insert(
    *, model: type[models.Model], columns: Sequence[str], row: Sequence[Any]
) -> None:
    """Insert one new row whose byte columns are large (megabytes), each sent as it is.

    PostgreSQL's text protocol, which `COPY` and Django's statements use, spells every
    byte out as two hex digits, and the driver builds that text whole: for a column of
    a million cases, several times the column. Here the bytes go as binary parameters.
    """
    fields = [model._meta.get_field(name) for name in columns]
    names = [str(getattr(f, "column", name)) for f, name in zip(fields, columns, strict=True)]
    adapters = [(i, adapt) for i, adapt in enumerate(map(_adapter, fields)) if adapt is not None]
    values = _adapt(row, adapters)
    if connection.vendor != "postgresql":  # SQLite binds bytes as they are
        _insert_many(model._meta.db_table, names, [values], False, 1)
        return
    import psycopg  # only on PostgreSQL: the embedded default does without it

    binary = (bytes, bytearray, memoryview)
    marks = ", ".join("%b" if isinstance(value, binary) else "%s" for value in values)
    sql = f"INSERT INTO {connection.ops.quote_name(model._meta.db_table)} ({_quoted(names)}) "
    connection.ensure_connection()
    # Django's cursors bind on the client, into the statement's text; psycopg's own
    # binds on the server, where `%b` parameters travel in binary.
    with psycopg.Cursor(connection.connection) as cursor:
        cursor.execute(f"{sql}VALUES ({marks})", values)


def _adapter(field: Any) -> Adapter | None:
    """How a column's values become what the driver sends (None: as they are)."""
    kind = field.get_internal_type()
    if kind == "JSONField":
        return json_text(field.encoder)
    if kind == "DateTimeField" and connection.vendor != "postgresql":
        return connection.ops.adapt_datetimefield_value
    return None


def json_text(encoder: type[json.JSONEncoder] | None) -> Adapter:
    """`json.dumps(value, cls=encoder)`, the text Django's JSONField stores, from an
    encoder built once: `json.dumps` builds one per value, which was a third of a large
    run's recording (six JSON columns a case)."""
    return engine.json_encoder(default=(encoder or json.JSONEncoder)().default)


def _adapt(row: Sequence[Any], adapters: Sequence[tuple[int, Adapter]]) -> list[Any]:
    values = list(row)
    for index, adapt in adapters:
        value = values[index]
        if value is not None:  # SQL NULL, as Django stores None in a JSON column
            values[index] = adapt(value)
    return values


def _quoted(names: Sequence[str]) -> str:
    quote = connection.ops.quote_name
    return ", ".join(quote(name) for name in names)


def _insert_many(
    table: str,
    names: Sequence[str],
    rows: Iterable[Sequence[Any]],
    ignore_conflicts: bool,
    batch_size: int,
) -> int:
    verb = "INSERT OR IGNORE" if ignore_conflicts else "INSERT"
    placeholders = ", ".join(["%s"] * len(names))
    sql = (
        f"{verb} INTO {connection.ops.quote_name(table)} ({_quoted(names)}) VALUES ({placeholders})"
    )
    sent = 0
    with connection.cursor() as cursor:
        for batch in batches(rows, batch_size):
            cursor.executemany(sql, batch)
            sent += len(batch)
    return sent


def _copy_postgresql(
    table: str, names: Sequence[str], rows: Iterable[Sequence[Any]], ignore_conflicts: bool
) -> int:
    quote = connection.ops.quote_name
    columns = _quoted(names)
    target = quote(table)
    sent = 0
    with transaction.atomic(), connection.cursor() as wrapper:
        cursor = wrapper.cursor  # psycopg's own cursor: Django's wrapper has no copy()
        if ignore_conflicts:
            # COPY has no ON CONFLICT: rows land in a scratch table first, then move
            # over in one statement that skips the ones already there.
            staging = quote(f"oloproof_staging_{uuid.uuid4().hex[:12]}")
            cursor.execute(
                f"CREATE TEMPORARY TABLE {staging} ON COMMIT DROP AS "
                f"SELECT {columns} FROM {target} WITH NO DATA"
            )
            sent = _copy_rows(cursor, staging, columns, rows)
            cursor.execute(
                f"INSERT INTO {target} ({columns}) SELECT {columns} FROM {staging} "
                "ON CONFLICT DO NOTHING"
            )
            cursor.execute(f"DROP TABLE {staging}")
        else:
            sent = _copy_rows(cursor, target, columns, rows)
    return sent


def _copy_rows(cursor: Any, table: str, columns: str, rows: Iterable[Sequence[Any]]) -> int:
    sent = 0
    with cursor.copy(f"COPY {table} ({columns}) FROM STDIN") as copy:
        for row in rows:
            copy.write_row(row)
            sent += 1
    return sent
