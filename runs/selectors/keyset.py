"""Keyset (cursor) paging: a page starts where the last one ended, found through an index.

A page asked for by number costs the database every row before it (OFFSET), and a
"page N of M" costs a count of the whole list; on a run of a million cases either one
reads the whole table. Here a list is ordered by a key and a unique tiebreaker (a
case's position and id, a run's creation time and id), and the next page is the rows
after the last one shown: `key > k OR (key = k AND id > i)`, written so that the
index seeks to `k` first. A cursor is that last (or first) row's key and id, encoded
as an opaque token for URLs; it stays valid while rows are added or removed, so
walking a list shows each row once and skips none that were there throughout.
"""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.db import connection, transaction
from django.db.models import Q, QuerySet

from runs.errors import InvalidRequestError

COUNT_CAP = 1_000
"""A count a filter cannot take from a stored counter stops here (`capped_count`)."""


@dataclass(frozen=True, slots=True)
class KeyOrder:
    """A list's order: `field`, then the unique `tiebreak`, both ascending or descending."""

    field: str
    tiebreak: str = "id"
    descending: bool = False

    def order_by(self, *, reverse: bool = False) -> tuple[str, str]:
        sign = "-" if self.descending != reverse else ""
        return (f"{sign}{self.field}", f"{sign}{self.tiebreak}")

    def beyond(self, key: tuple[Any, Any], *, reverse: bool = False) -> Q:
        """The rows after `key` in this order (before it with `reverse`).

        The first condition alone is what an index on `field` seeks with; the second
        settles the rows that share the key."""
        value, tiebreak = key
        later = "lt" if self.descending != reverse else "gt"
        return Q(**{f"{self.field}__{later}e": value}) & (
            Q(**{f"{self.field}__{later}": value}) | Q(**{f"{self.tiebreak}__{later}": tiebreak})
        )


@dataclass(frozen=True, slots=True)
class Cursor:
    """Where a page starts: after `key` (forward) or before it (`backward`)."""

    key: tuple[Any, Any]
    backward: bool = False


@dataclass(frozen=True, slots=True)
class KeysetPage:
    """A page's rows as ids (in order), and the tokens of the pages beside it."""

    ids: list[Any]
    next: str | None
    previous: str | None
    first: bool
    """No row comes before this page."""


def cursor_encode(key: tuple[Any, Any]) -> str:
    value, tiebreak = key
    kind = "t" if isinstance(value, datetime) else "v"
    plain = value.isoformat() if isinstance(value, datetime) else value
    text = json.dumps([kind, plain, tiebreak], separators=(",", ":"))
    return base64.urlsafe_b64encode(text.encode()).decode().rstrip("=")


def cursor_decode(token: str) -> tuple[Any, Any]:
    """The key a token holds; a token this code did not make is an InvalidRequestError."""
    try:
        padded = token + "=" * (-len(token) % 4)
        kind, value, tiebreak = json.loads(base64.urlsafe_b64decode(padded.encode()))
        if kind == "t":
            value = datetime.fromisoformat(value)
        elif kind != "v" or not isinstance(value, int | float | str):
            raise ValueError(kind)
        if not isinstance(tiebreak, int) or isinstance(tiebreak, bool):
            raise ValueError(tiebreak)
    except (ValueError, TypeError, binascii.Error, UnicodeError) as exc:
        raise InvalidRequestError(
            f"the page cursor {token[:40]!r} is not one this list gave out; "
            "start again from the first page (without the cursor)"
        ) from exc
    return value, tiebreak


def cursor_from(*, after: str | None, before: str | None) -> Cursor | None:
    """The cursor of a request's `after` or `before` token (after wins), or None."""
    if after:
        return Cursor(cursor_decode(after))
    if before:
        return Cursor(cursor_decode(before), backward=True)
    return None


@contextmanager
def few_rows() -> Iterator[None]:
    """Run the queries inside as the short reads they are: on PostgreSQL, with neither
    JIT compilation nor parallel workers (for this transaction only).

    A page's query stops after a few dozen rows, but a plan whose estimated total cost
    is high gets both: compiling took ~50 ms of a 4 ms search, and two workers scanning
    ahead made a 51-row page of a million-case run 142 ms instead of 9.
    """
    if connection.vendor != "postgresql":
        yield
        return
    # No savepoint inside a transaction already open: the settings last to its end.
    with transaction.atomic(savepoint=False), connection.cursor() as cursor:
        cursor.execute(
            "SELECT set_config('jit', 'off', true), "
            "set_config('max_parallel_workers_per_gather', '0', true)"
        )
        yield


def keyset_page(
    query: QuerySet[Any], *, order: KeyOrder, size: int, cursor: Cursor | None = None
) -> KeysetPage:
    """One page of `query` (ids of its rows) in `order`, after or before `cursor`.

    Reads `size + 1` keys from where the cursor points, and at most one more to learn
    whether anything lies on the page's other side: never a count, never an offset.
    """
    with few_rows():
        return _keyset_page(query, order, size, cursor)


def _keyset_page(
    query: QuerySet[Any], order: KeyOrder, size: int, cursor: Cursor | None
) -> KeysetPage:
    fields = (order.field, order.tiebreak)
    backward = cursor is not None and cursor.backward
    rows = query
    if cursor is not None:
        rows = rows.filter(order.beyond(cursor.key, reverse=backward))
    ordered = rows.order_by(*order.order_by(reverse=backward)).values_list(*fields)
    keys = [tuple(row) for row in ordered[: size + 1]]
    more = len(keys) > size
    keys = keys[:size]
    if backward:
        keys.reverse()
    if not keys:
        return KeysetPage(ids=[], next=None, previous=None, first=cursor is None or backward)
    first_key, last_key = keys[0], keys[-1]
    if backward:
        before_first, after_last = more, _exists(query, order, last_key)
    else:
        before_first = cursor is not None and _exists(query, order, first_key, reverse=True)
        after_last = more
    return KeysetPage(
        ids=[key[1] for key in keys],
        next=cursor_encode(last_key) if after_last else None,
        previous=cursor_encode(first_key) if before_first else None,
        first=not before_first,
    )


def _exists(
    query: QuerySet[Any], order: KeyOrder, key: tuple[Any, Any], *, reverse: bool = False
) -> bool:
    return query.filter(order.beyond(key, reverse=reverse)).order_by().exists()


@dataclass(frozen=True, slots=True)
class Count:
    """How many rows a list has: exact, or at least `value` when `capped`."""

    value: int
    capped: bool = False


def capped_count(query: QuerySet[Any], *, cap: int | None = None) -> Count:
    """The rows of `query`, counted up to `cap` (COUNT_CAP): the database stops there."""
    cap = COUNT_CAP if cap is None else cap
    with few_rows():
        found = len(query.order_by().values_list("pk", flat=True)[: cap + 1])
    return Count(min(found, cap), capped=found > cap)
