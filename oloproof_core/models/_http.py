"""The chat completions endpoint over HTTP: one request, and its reply whole or streamed.

Sent with httpx rather than through the OpenAI SDK: importing the SDK takes 0.8 - 0.9 s
(its typed models), which every sandboxed system process paid before its first case,
and an optimization's own process again for its reflection model. httpx, which the SDK
itself sends with, takes about 0.15 s. The wire is the documented chat completions one:
a JSON body POSTed to `{base_url}/chat/completions`, a JSON reply, or server-sent events
ending with `data: [DONE]` when `stream` is asked for.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Any

import httpx

DEFAULT_BASE_URL = "https://api.openai.com/v1"
_REQUEST_OPTIONS = ("extra_body", "extra_headers", "timeout")
"""Options that shape the request rather than its body, as the SDK takes them."""


class CallFailedError(Exception):
    """No answer: a connection that failed (`status` None) or an error status."""

    def __init__(self, message: str, *, status: int | None = None, retry_after: str | None = None):
        super().__init__(message)
        self.status, self.retry_after = status, retry_after


class MalformedReplyError(Exception):
    """The server answered 200 with something that is not a chat completion."""


class ChatEndpoint:
    """One server's chat completions, with its key and time limit; safe across threads."""

    def __init__(self, *, base_url: str | None, api_key: str, timeout_s: float) -> None:
        root = base_url or os.environ.get("OPENAI_BASE_URL") or DEFAULT_BASE_URL
        self.url = root.rstrip("/") + "/chat/completions"
        # A plain-HTTP endpoint (the gateway a sandboxed system reaches, a local server)
        # never makes a TLS connection, redirects not being followed: loading the
        # certificate store for it (about 50 ms) would be spent for nothing.
        plain = self.url.startswith("http://")
        self._client = httpx.Client(
            timeout=timeout_s,
            headers={"Authorization": f"Bearer {api_key}"},
            verify=not plain,
        )

    def create(self, body: Mapping[str, Any]) -> dict[str, Any]:
        """The reply of one request, as JSON."""
        request = self._request(body)
        try:
            response = self._client.send(request)
        except httpx.TransportError as exc:  # timeouts included
            raise CallFailedError(f"Connection error: {exc!r}") from exc
        _check(response)
        try:
            reply = response.json()
        except ValueError as exc:
            raise MalformedReplyError(f"not JSON: {_shown(response.text)}") from exc
        if not isinstance(reply, dict):
            raise MalformedReplyError(f"not a JSON object: {_shown(response.text)}")
        return reply

    @contextmanager
    def stream(self, body: Mapping[str, Any]) -> Iterator[Iterator[dict[str, Any]]]:
        """The reply's chunks, read as they arrive."""
        request = self._request(body)
        try:
            response = self._client.send(request, stream=True)
        except httpx.TransportError as exc:
            raise CallFailedError(f"Connection error: {exc!r}") from exc
        try:
            if response.status_code >= 400:
                response.read()
                _check(response)
            yield _events(response)
        finally:
            response.close()

    def _request(self, body: Mapping[str, Any]) -> httpx.Request:
        options = {key: body[key] for key in _REQUEST_OPTIONS if key in body}
        payload = {key: value for key, value in body.items() if key not in _REQUEST_OPTIONS}
        payload.update(options.get("extra_body") or {})
        extensions = {}
        if options.get("timeout") is not None:
            extensions["timeout"] = httpx.Timeout(options["timeout"]).as_dict()
        return self._client.build_request(
            "POST",
            self.url,
            json=payload,
            headers=options.get("extra_headers"),
            extensions=extensions,
        )


def _events(response: httpx.Response) -> Iterator[dict[str, Any]]:
    try:
        for line in response.iter_lines():
            if not line.startswith("data:"):
                continue  # a comment, an event name, an id, a blank separator
            data = line[len("data:") :].strip()
            if data == "[DONE]":
                return
            try:
                chunk = json.loads(data)
            except ValueError as exc:
                raise MalformedReplyError(f"a stream chunk is not JSON: {_shown(data)}") from exc
            if isinstance(chunk, dict) and chunk.get("error"):
                raise MalformedReplyError(f"the stream carried an error: {_shown(data)}")
            if isinstance(chunk, dict):
                yield chunk
    except httpx.TransportError as exc:
        raise CallFailedError(f"Connection error: {exc!r}") from exc


def _check(response: httpx.Response) -> None:
    if response.status_code < 400:
        return
    raise CallFailedError(
        f"Error code: {response.status_code} - {_shown(response.text)}",
        status=response.status_code,
        retry_after=response.headers.get("retry-after"),
    )


def _shown(text: str, limit: int = 300) -> str:
    return text if len(text) <= limit else text[:limit] + "…"
