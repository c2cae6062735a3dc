"""What every dashboard view shares: domain errors mapped to HTTP, paging (by number for
short lists, by cursor for long ones: runs.selectors.keyset)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, TypeVar

from django.contrib import messages
from django.core.exceptions import PermissionDenied
from django.core.paginator import Page, Paginator
from django.http import Http404, HttpRequest

from runs.errors import DomainError, InvalidRequestError, NotFoundError, NotPermittedError
from runs.models import Run
from runs.selectors.keyset import Cursor, cursor_from
from runs.selectors.runs import run_get

T = TypeVar("T")
PAGE_SIZE = 50


@contextmanager
def domain_errors() -> Iterator[None]:
    """A missing record is a 404, a refused permission a 403."""
    try:
        yield
    except NotFoundError as exc:
        raise Http404(str(exc)) from None
    except NotPermittedError as exc:
        raise PermissionDenied(str(exc)) from None


def attempt(request: HttpRequest, action: Callable[..., T], **kwargs: Any) -> T | None:
    """The action's result, or None with its refusal shown as a message; a record the
    user may not see is still a 404, and a role they lack a 403."""
    try:
        with domain_errors():
            return action(**kwargs)
    except DomainError as exc:
        messages.error(request, str(exc))
        return None


def get_run_or_404(request: HttpRequest, run_id: int) -> Run:
    """The run if the signed-in user may see it; every other id is a 404."""
    with domain_errors():
        return run_get(user=request.user, run_id=run_id)


def page_of(
    request: HttpRequest, items: Any, *, per_page: int = PAGE_SIZE, name: str = "page"
) -> Page[Any]:
    """The requested page (`?<name>=`), the last one when the number is past the end."""
    paginator = Paginator(items, per_page)
    page = paginator.get_page(request.GET.get(name))
    page.parameter = name  # type: ignore[attr-defined]
    return page


def query_without_page(request: HttpRequest, name: str = "page") -> str:
    """The current filters as a query string, for links to other pages of the same list."""
    params = request.GET.copy()
    params.pop(name, None)
    return params.urlencode()


def call(func: Callable[..., T], **kwargs: Any) -> T:
    with domain_errors():
        return func(**kwargs)


CURSOR_PARAMETERS = ("after", "before", "page")
"""A cursor-paged list's place in its URL; `page` is what its links said before."""


def cursor_of(request: HttpRequest) -> Cursor | None:
    """The page a cursor-paged list was asked for (`?after=` or `?before=`); a token
    the list did not give out shows its first page, with a word why."""
    try:
        return cursor_from(after=request.GET.get("after"), before=request.GET.get("before"))
    except InvalidRequestError:
        messages.warning(request, "That page link is no longer valid; here is the first page.")
        return None


def query_without_cursor(request: HttpRequest) -> str:
    """The current filters as a query string, for the links of a cursor-paged list."""
    params = request.GET.copy()
    for name in CURSOR_PARAMETERS:
        params.pop(name, None)
    return params.urlencode()
