"""Requests carrying text no supported database can store are refused with a 400.

PostgreSQL refuses a NUL character in any text or JSON value, and text that is not
Unicode (a lone surrogate); SQLite keeps both. Rather than a database error (a 500)
on whichever query first meets such a value, a request with one anywhere (the path,
the query, a form field, a JSON body's escapes) is answered 400 before any view runs,
on every database alike.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from django.http import HttpRequest, HttpResponse, JsonResponse

import oloproof_core as engine

_JSON_ESCAPES = re.compile(rb"\\u0000|\\u[dD][89abAB][0-9a-fA-F]{2}(?!\\u[dD][c-fC-F])")
"""A JSON-escaped NUL, or a high surrogate not followed by a low one."""
_LONE_LOW = re.compile(rb"(?<!\\u[dD][89abAB][0-9a-fA-F]{2})\\u[dD][c-fC-F][0-9a-fA-F]{2}")
MESSAGE = (
    "the request contains a NUL character or a lone surrogate, which cannot be stored; remove it"
)


def request_problem(request: HttpRequest) -> bool:
    texts = [request.path]
    sources = [request.GET]
    if request.method == "POST" and request.content_type != "application/json":
        sources.append(request.POST)
    for params in sources:
        for key, values in params.lists():
            texts.append(key)
            texts.extend(values)
    if any(engine.value_problem(text) for text in texts):
        return True
    if request.content_type == "application/json":
        body = request.body
        return b"\x00" in body or bool(_JSON_ESCAPES.search(body) or _LONE_LOW.search(body))
    return False


class UnstorableInputMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        if request_problem(request):
            if request.path.startswith("/api/"):
                return JsonResponse({"detail": MESSAGE}, status=400)
            return HttpResponse(MESSAGE, status=400, content_type="text/plain; charset=utf-8")
        return self.get_response(request)
