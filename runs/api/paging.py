"""The REST API's two paginations: by cursor for long lists, by offset for short ones.

`CursorPaging` (runs, a run's cases): `?limit=&after=`, answered with the next and
previous cursors (runs.selectors.keyset), so a page deep in a million cases costs what the
first one does. `Paging`: django-ninja's limit-offset paginator, with bounds that
answer 400 in words (rather than a validation dump) and an offset ceiling, so no
database is asked for row 2^63.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.db.models import QuerySet
from django.http import HttpRequest
from ninja import Field, Schema
from ninja.errors import HttpError
from ninja.pagination import LimitOffsetPagination, PaginationBase

from runs.errors import InvalidRequestError
from runs.selectors.keyset import Count, KeyOrder, cursor_from, keyset_page

MAX_LIMIT = 500
MAX_OFFSET = 1_000_000_000


class Paging(LimitOffsetPagination):
    """`@paginate(Paging, default_limit=N)` on a route that returns a queryset or a slicer."""

    class Input(Schema):
        limit: int | None = Field(None, description=f"items per page, 1 to {MAX_LIMIT}")
        offset: int = Field(0, description="items to skip")

    class Output(Schema):
        count: int
        limit: int
        offset: int
        items: list[Any]

    def __init__(self, *, default_limit: int = 50, **kwargs: Any) -> None:
        self.default_limit = default_limit
        super().__init__(max_limit=MAX_LIMIT, **kwargs)

    def paginate_queryset(
        self, queryset: Any, pagination: Any, request: HttpRequest, **params: Any
    ) -> dict[str, Any]:
        limit = self.default_limit if pagination.limit is None else pagination.limit
        offset = pagination.offset
        if not 1 <= limit <= MAX_LIMIT:
            raise HttpError(400, f"limit must be between 1 and {MAX_LIMIT}, got {limit}")
        if not 0 <= offset <= MAX_OFFSET:
            raise HttpError(400, f"offset must be between 0 and {MAX_OFFSET}, got {offset}")
        return {
            "count": self._items_count(queryset),
            "limit": limit,
            "offset": offset,
            "items": queryset[offset : offset + limit],
        }


class KeysetRows:
    """What a cursor-paged route returns: its rows' query (for the page's keys), how to
    read a page's rows from their ids, and how to tell the list's size."""

    def __init__(
        self,
        query: QuerySet[Any],
        *,
        order: KeyOrder,
        rows: Callable[[list[Any]], list[Any]],
        total: Callable[[], Count],
    ) -> None:
        self.query, self.order, self.rows, self.total = query, order, rows, total


class CursorPaging(PaginationBase):
    """`@paginate(CursorPaging, default_limit=N)` on a route that returns `KeysetRows`.

    `?limit=&after=` (or `before=`), answered with the items, the `next` and `previous`
    cursors and the list's `count` (`count_capped`: at least that many). A page starts
    where the last one ended, so no page costs the rows before it; `offset` is still
    accepted at 0, the only value it can take.
    """

    class Input(Schema):
        limit: int | None = Field(None, description=f"items per page, 1 to {MAX_LIMIT}")
        after: str | None = Field(None, description="the `next` cursor of the page before")
        before: str | None = Field(None, description="the `previous` cursor of the page after")
        offset: int = Field(0, description="0 (pages follow cursors, not offsets)")

    class Output(Schema):
        count: int
        count_capped: bool
        limit: int
        next: str | None
        previous: str | None
        items: list[Any]

    def __init__(self, *, default_limit: int = 50, **kwargs: Any) -> None:
        self.default_limit = default_limit
        super().__init__(**kwargs)

    def paginate_queryset(
        self, queryset: Any, pagination: Any, request: HttpRequest, **params: Any
    ) -> dict[str, Any]:
        limit = self.default_limit if pagination.limit is None else pagination.limit
        if not 1 <= limit <= MAX_LIMIT:
            raise HttpError(400, f"limit must be between 1 and {MAX_LIMIT}, got {limit}")
        if pagination.offset:
            raise HttpError(
                400,
                f"offset must be 0, got {pagination.offset}: this list pages by cursor; "
                "pass the `next` value of the page before as `after`",
            )
        try:
            cursor = cursor_from(after=pagination.after, before=pagination.before)
        except InvalidRequestError as exc:
            raise HttpError(400, str(exc)) from None
        rows: KeysetRows = queryset
        page = keyset_page(rows.query, order=rows.order, size=limit, cursor=cursor)
        total = rows.total()
        return {
            "count": total.value,
            "count_capped": total.capped,
            "limit": limit,
            "next": page.next,
            "previous": page.previous,
            "items": rows.rows(page.ids),
        }
