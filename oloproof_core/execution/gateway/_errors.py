"""Error replies in OpenAI's shape, so every client raises its usual exception types."""

from __future__ import annotations

import json

from aiohttp import web


def error_body(message: str, *, kind: str, code: str | int | None = None) -> bytes:
    error = {"message": message, "type": kind, "param": None, "code": code}
    return json.dumps({"error": error}).encode()


def error_response(
    status: int, message: str, *, kind: str, code: str | int | None = None
) -> web.Response:
    return web.Response(
        status=status,
        body=error_body(message, kind=kind, code=code),
        content_type="application/json",
    )


def unauthorized() -> web.Response:
    return error_response(
        401,
        "Invalid gateway key: use the OPENAI_API_KEY this run was given.",
        kind="invalid_request_error",
        code="invalid_api_key",
    )
