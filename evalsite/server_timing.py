"""`Server-Timing: app;dur=<ms>` on every response, when OLOPROOF_SERVER_TIMING is on.

The time from this middleware (the first) receiving the request to the response
leaving it: the application's own time, with the network, the WSGI server's queue
and the client's work left out, as a browser's developer tools or a benchmark read
it. Off by default: the figure tells an observer how long a request took, which a
deployment may not want to publish.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from django.conf import settings
from django.core.exceptions import MiddlewareNotUsed
from django.http import HttpRequest, HttpResponseBase


class ServerTimingMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponseBase]) -> None:
        if not getattr(settings, "OLOPROOF_SERVER_TIMING", False):
            raise MiddlewareNotUsed
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponseBase:
        started = time.perf_counter()
        response = self.get_response(request)
        # A streamed download's figure is the time to its first bytes.
        response["Server-Timing"] = f"app;dur={(time.perf_counter() - started) * 1000:.1f}"
        return response
