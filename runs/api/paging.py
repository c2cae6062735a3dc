"""The one pagination of the REST API: `?limit=&offset=`, answered with count, limit, offset.

django-ninja's limit-offset paginator, with bounds that answer 400 in words
(rather than a validation dump) and an offset ceiling, so no database is asked
for row 2^63.
"""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest
from ninja import Field, Schema
from ninja.errors import HttpError
from ninja.pagination import LimitOffsetPagination

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
