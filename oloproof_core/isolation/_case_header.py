"""Inside an async system's process: name the case on each model call to the gateway.

Several cases run at once in one async process, so its gateway key alone cannot say
whose call it is. The request's case context can: every HTTP request that `httpx`
(or its `httpx2` fork) sends to the gateway carries the id of the case whose task
made it; the `openai` SDK, LiteLLM and DSPy all send through one of the two. The
gateway accepts the header only for a case in flight on this process's key, so a
system can at most move cost between its own open cases, never out of the run or
onto another role.
"""

from __future__ import annotations

from types import ModuleType
from typing import Any

from oloproof_core._headers import CASE_HEADER
from oloproof_core.context import current_case_or_none
from oloproof_core.isolation._after_import import after_import

HTTP_LIBRARIES = ("httpx", "httpx2")
"""Client libraries whose requests carry the header (the `openai` SDK uses one or the other)."""


def send_case_header(gateway_url: str) -> None:
    """Make httpx-style clients add the current case's id to requests for `gateway_url`:
    those loaded already, and any the system loads later (not loaded for it here)."""

    def patch(library: ModuleType) -> None:
        library.Client.send = _with_case(library.Client.send, gateway_url)
        library.AsyncClient.send = _with_case(library.AsyncClient.send, gateway_url)

    after_import(HTTP_LIBRARIES, patch)


def _with_case(send: Any, gateway_url: str) -> Any:
    def wrapped(self: Any, request: Any, *args: Any, **kwargs: Any) -> Any:
        case = current_case_or_none()
        if case is not None and str(request.url).startswith(gateway_url):
            request.headers[CASE_HEADER] = case.id
        return send(self, request, *args, **kwargs)

    return wrapped
