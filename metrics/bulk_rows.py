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
from collections.abc import Callable, Iterable, Iterator, Sequence
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


def large_bytes_write(
    *,
    model: type[models.Model],
    pk: Any,
    column: str,
    parts: Iterable[bytes | memoryview],
    total: int,
) -> None:
    """Set `column` of the row `pk` to the concatenation of `parts` (`total` bytes in all),
    holding one part at a time: `parts` may be a generator reading a file.

    A million-case run's value columns are tens of megabytes; built whole, then
    adapted by the driver, they cost the process several times that. On PostgreSQL the
    first part replaces the column and each later one is appended (`col || part`),
    every part a binary parameter; on SQLite the column is sized once (`zeroblob`) and
    the parts are written into it through an incremental blob handle.

    Raises ValueError naming both figures when the parts add up to another length than
    `total`, and `model.DoesNotExist` when there is no such row; either way the column
    keeps its old value. Runs in a savepoint of the caller's transaction (in a
    transaction of its own without one), so it never commits the caller's work.
    """
    field = model._meta.get_field(column)
    key = model._meta.pk
    assert key is not None  # every concrete model has one
    target = (model._meta.db_table, str(getattr(field, "column", column)), str(key.column))
    key_value = key.get_db_prep_value(pk, connection)
    checked = _counted(parts, total)
    connection.ensure_connection()
    # A savepoint: bytes half written when the parts run short or over are undone
    # with it, and the caller's transaction goes on.
    with transaction.atomic():
        if connection.vendor == "postgresql":
            found = _parts_postgresql(*target, key_value, checked)
        else:
            found = _parts_sqlite(*target, key_value, total, checked)
        if not found:
            # The stubs know `DoesNotExist` on each model class, not on `type[Model]`.
            missing = model.DoesNotExist  # type: ignore[attr-defined]
            raise missing(f"no {model.__name__} with {key.name} {pk!r}")


def _counted(parts: Iterable[bytes | memoryview], total: int) -> Iterator[bytes | memoryview]:
    """`parts` as flat bytes, checked against `total` before a part would go past it."""
    sent = 0
    parts = iter(parts)  # the sum of the rest goes on from the part that went over
    for part in parts:
        if isinstance(part, memoryview) and (part.ndim != 1 or part.format != "B"):
            part = part.cast("B")  # blob.write and `%b` take bytes; `len` counts items
        if sent + len(part) > total:
            # Counted to the end, without holding them, so the message names the sum.
            sent += len(part) + sum(memoryview(rest).nbytes for rest in parts)
            break
        sent += len(part)
        yield part
    if sent != total:
        raise ValueError(f"the parts add up to {sent} bytes, not the total of {total}")


def _parts_postgresql(
    table: str, column: str, key: str, key_value: Any, parts: Iterable[bytes | memoryview]
) -> bool:
    import psycopg  # only on PostgreSQL: the embedded default does without it

    quote = connection.ops.quote_name
    update = f"UPDATE {quote(table)} SET {quote(column)} = "
    where = f" WHERE {quote(key)} = %s"
    parts = iter(parts)
    # psycopg's own cursor binds on the server, where `%b` travels in binary (see
    # `large_row_insert`).
    with psycopg.Cursor(connection.connection) as cursor:
        cursor.execute(f"{update}%b{where}", (next(parts, b""), key_value))
        if cursor.rowcount == 0:
            return False
        for part in parts:
            cursor.execute(f"{update}{quote(column)} || %b{where}", (part, key_value))
    return True


def _parts_sqlite(
    table: str,
    column: str,
    key: str,
    key_value: Any,
    total: int,
    parts: Iterable[bytes | memoryview],
) -> bool:
    quote = connection.ops.quote_name
    with connection.cursor() as cursor:
        cursor.execute(
            f"UPDATE {quote(table)} SET {quote(column)} = zeroblob(%s) WHERE {quote(key)} = %s",
            [total, key_value],
        )
        cursor.execute(f"SELECT rowid FROM {quote(table)} WHERE {quote(key)} = %s", [key_value])
        row = cursor.fetchone()
    if row is None:
        return False
    with connection.connection.blobopen(table, column, row[0]) as blob:
        # `_counted` raises before a part would run past the blob's end, where
        # blob.write would refuse it without the figures.
        for part in parts:
            blob.write(part)
    return True


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
