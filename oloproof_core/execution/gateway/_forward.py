"""Forwarding one request to the provider and metering what came back.

The request body goes upstream byte for byte unless the gateway must change it:
a pinned model replaces the client's `model`, and a stream is asked for its usage.
Only the operator's key goes upstream; the client's headers stay behind, and of the
provider's reply headers only the ones a client needs to behave (content type,
retry hints) come back.

A call is recorded once: when its reply has ended, or when the gateway cuts it (its
case ended, or the run did, while it was open: `cut`) with what had passed through.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import aiohttp
from aiohttp import web

from oloproof_core.execution.gateway._errors import error_body, error_response, unauthorized
from oloproof_core.execution.gateway._exchange import Exchange, reply_of, request_exchange
from oloproof_core.execution.gateway._keys import KeyRing, Ticket
from oloproof_core.execution.gateway._records import GatewayCall, Ledger
from oloproof_core.execution.gateway._routes import Pricing, Route
from oloproof_core.execution.gateway._usage import (
    StreamMeter,
    Tokens,
    model_of,
    parse_json,
    usage_of,
)

_RELAYED_HEADERS = ("retry-after", "retry-after-ms", "x-request-id")
_STREAMING_ENDPOINTS = frozenset({"/chat/completions", "/completions"})


@dataclass(slots=True)
class _Call:
    """One call in flight: who made it, what is sent, and what was measured so far."""

    ticket: Ticket
    route: Route
    endpoint: str
    payload: bytes
    forwarded_model: str | None
    streamed: bool
    client_wants_usage: bool
    status: int = 0
    answered_model: str | None = None
    tokens: Tokens | None = None
    meter: StreamMeter | None = None
    failure: str | None = None
    started: float = 0.0
    started_at: float = 0.0
    recorded: bool = False
    exchange: Exchange | None = None
    reply: dict[str, Any] | None = None


class Forwarder:
    """The request handlers, sharing one upstream connection pool."""

    def __init__(
        self, keys: KeyRing, ledger: Ledger, routes: dict[str, Route], pricing: Pricing
    ) -> None:
        self.keys = keys
        self.ledger = ledger
        self.routes = routes
        self.pricing = pricing
        self.session: aiohttp.ClientSession | None = None

    async def open(self) -> None:
        # Connections are kept alive and reused across calls; no per-host cap below the
        # number of requests clients have in flight.
        connector = aiohttp.TCPConnector(limit=0, keepalive_timeout=60)
        self.session = aiohttp.ClientSession(connector=connector, auto_decompress=True)

    async def close(self) -> None:
        if self.session is not None:
            await self.session.close()
            self.session = None

    async def models(self, request: web.Request) -> web.StreamResponse:
        grant = self.keys.lookup(_bearer(request))
        if grant is None:
            return unauthorized()
        route = self.routes.get(grant[0])
        names = [route.model] if route and route.model else sorted(self.pricing.table)
        data = [{"id": n, "object": "model", "created": 0, "owned_by": "oloproof"} for n in names]
        return web.json_response({"object": "list", "data": data})

    async def forward(self, request: web.Request) -> web.StreamResponse:
        # Attributed the moment it arrives, from its key alone (`_keys`).
        ticket = self.keys.admit(_bearer(request), asyncio.current_task())
        if ticket is None:
            return unauthorized()
        try:
            return await self._forward(request, ticket)
        finally:
            self.keys.close(ticket)

    async def cut(self, tickets: Iterable[Ticket], reason: str) -> None:
        """End these calls now, each recorded with what had passed through (`reason`:
        one of `_keys.CUT_REASONS`); a request not forwarded yet is only stopped."""
        for ticket in tickets:
            call = ticket.call
            if isinstance(call, _Call) and call.recorded:
                continue
            ticket.cut_reason = reason
            if isinstance(call, _Call):
                self._record(call)
            else:
                self.keys.close(ticket)
            if ticket.task is not None and not ticket.task.done():
                ticket.task.cancel()  # the client's connection closes: its reply ends here

    async def _forward(self, request: web.Request, ticket: Ticket) -> web.StreamResponse:
        route = self.routes.get(ticket.role)
        if route is None:
            message = f"this gateway has no provider for the {ticket.role} role"
            return error_response(503, message, kind="server_error")
        endpoint = request.path.removeprefix("/v1")
        raw = await request.read()
        body = parse_json(raw)
        if not isinstance(body, dict):
            message = "the request body must be a JSON object"
            return error_response(400, message, kind="invalid_request_error")
        call = _prepare(ticket, route, endpoint, raw, body)
        ticket.call = call
        call.started, call.started_at = time.perf_counter(), time.time()
        try:
            return await self._exchange(request, call)
        finally:
            if not call.recorded:  # a whole reply: recorded before the client has it
                self._record(call)

    async def _exchange(self, request: web.Request, call: _Call) -> web.StreamResponse:
        assert self.session is not None, "the gateway is not started"
        headers = {"Content-Type": "application/json"}
        if call.route.api_key:
            headers["Authorization"] = f"Bearer {call.route.api_key}"
        timeout = aiohttp.ClientTimeout(
            total=None, sock_connect=call.route.timeout_s, sock_read=call.route.timeout_s
        )
        url = call.route.url(call.endpoint)
        try:
            async with self.session.post(
                url, data=call.payload, headers=headers, timeout=timeout
            ) as upstream:
                call.status = upstream.status
                is_stream = upstream.content_type == "text/event-stream"
                if call.streamed and upstream.status == 200 and is_stream:
                    return await self._relay_stream(request, upstream, call)
                return await self._relay_whole(upstream, call)
        except TimeoutError:
            call.status = 504
            call.failure = f"the provider did not answer within {call.route.timeout_s:g} s"
        except aiohttp.ClientError as exc:
            call.status = 502
            call.failure = f"the provider could not be reached: {type(exc).__name__}: {exc}"
        return error_response(call.status, call.failure, kind="upstream_error")

    async def _relay_whole(
        self, upstream: aiohttp.ClientResponse, call: _Call
    ) -> web.StreamResponse:
        body = await upstream.read()
        reply = parse_json(body)
        call.answered_model = model_of(reply)
        call.tokens = usage_of(reply, has_output=call.endpoint != "/embeddings")
        if upstream.status < 400 and call.endpoint != "/embeddings":
            call.reply = reply_of(reply)
        if upstream.status >= 400:
            body = _error_for_client(upstream.status, body, reply, call.route)
        response = web.Response(status=upstream.status, body=_scrubbed(body, call.route))
        response.content_type = (
            upstream.content_type if upstream.status < 400 else "application/json"
        )
        _copy_headers(upstream, response)
        return response

    async def _relay_stream(
        self, request: web.Request, upstream: aiohttp.ClientResponse, call: _Call
    ) -> web.StreamResponse:
        response = web.StreamResponse(status=200)
        response.content_type = "text/event-stream"
        response.headers["Cache-Control"] = "no-cache"
        _copy_headers(upstream, response)
        await response.prepare(request)
        meter = call.meter = StreamMeter(client_wants_usage=call.client_wants_usage)
        try:
            async for data in upstream.content.iter_any():
                relayed = meter.feed(data)
                if relayed:
                    await response.write(relayed)
        except (aiohttp.ClientError, TimeoutError) as exc:
            # Too late for an error status: the client sees the stream end early.
            call.status = 502
            call.failure = f"the provider's stream broke off: {type(exc).__name__}: {exc}"
        finally:
            # A client that hangs up mid-stream still made the call: what arrived counts.
            # (A call cut meanwhile was recorded by the cut.)
            if not call.recorded:
                self._record(call)
        # Only now may the client learn the stream is over: the call is in the ledger.
        await response.write(meter.flush())
        await response.write_eof()
        return response

    def _record(self, call: _Call) -> None:
        latency_ms = (time.perf_counter() - call.started) * 1000.0
        call.recorded = True
        ticket = call.ticket
        self.keys.close(ticket)
        if call.meter is not None:  # a stream: what its events said so far
            call.answered_model, call.tokens = call.meter.model, call.meter.tokens
            call.reply = call.meter.reply.reply()
        answered = call.answered_model
        cost, reason = self.pricing.cost(call.route, call.forwarded_model, answered, call.tokens)
        if call.failure is not None:
            reason = call.failure
        elif reason is not None and ticket.cut_reason is not None:
            reason = f"it was cut before the provider reported usage: {ticket.cut_reason}"
        elif reason is not None and call.status >= 400:
            reason = f"the provider answered {call.status}; {reason}"
        self.ledger.add(
            GatewayCall(
                role=ticket.role,
                model=answered or call.forwarded_model or "(unnamed)",
                input_tokens=None if call.tokens is None else call.tokens[0],
                output_tokens=None if call.tokens is None else call.tokens[1],
                latency_ms=latency_ms,
                cost_usd=cost,
                case_id=ticket.case_id,
                status=call.status,
                streamed=call.streamed,
                unmeasured_reason=reason,
                endpoint=call.endpoint,
                key_label=ticket.label,
                unattributed_reason=ticket.unattributed_reason,
                cut_reason=ticket.cut_reason,
                started_at=call.started_at,
                exchange=_said(call, reason),
            )
        )


def _prepare(
    ticket: Ticket,
    route: Route,
    endpoint: str,
    raw: bytes,
    body: dict[str, Any],
) -> _Call:
    """The body to send upstream: the client's, changed only where the gateway must."""
    changed = False
    asked = body.get("model")
    if route.model is not None and asked != route.model:
        body["model"] = route.model
        changed = True
    streamed = endpoint in _STREAMING_ENDPOINTS and body.get("stream") is True
    options = body.get("stream_options")
    wants_usage = isinstance(options, dict) and options.get("include_usage") is True
    if streamed and not wants_usage:
        body["stream_options"] = {**(options if isinstance(options, dict) else {})}
        body["stream_options"]["include_usage"] = True
        changed = True
    forwarded = body.get("model")
    return _Call(
        ticket=ticket,
        route=route,
        endpoint=endpoint,
        payload=json.dumps(body, ensure_ascii=False).encode() if changed else raw,
        forwarded_model=forwarded if isinstance(forwarded, str) else None,
        streamed=streamed,
        client_wants_usage=wants_usage,
        exchange=request_exchange(endpoint, body),
    )


def _said(call: _Call, reason: str | None) -> Exchange | None:
    """The call's exchange with its reply (or, for a call without one, why not)."""
    if call.exchange is None:
        return None
    reply = call.reply or {"role": "assistant", "text": "", "tool_calls": []}
    if call.failure is not None or call.status >= 400 or call.ticket.cut_reason is not None:
        reply = {**reply, "error": call.ticket.cut_reason or reason or f"status {call.status}"}
    return call.exchange.answered(reply)


def _bearer(request: web.Request) -> str | None:
    header = request.headers.get("Authorization", "")
    scheme, _, token = header.partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        return None
    return token.strip()


def _error_for_client(status: int, body: bytes, reply: Any, route: Route) -> bytes:
    """The provider's error as it sent it, unless it is about the operator's credentials."""
    if status in (401, 403):
        # Providers quote part of a rejected key back; the client must not see any of it.
        message = f"the provider refused the gateway's credentials for the {route.role} role"
        return error_body(message, kind="upstream_error", code=status)
    if isinstance(reply, dict) and isinstance(reply.get("error"), dict):
        return body
    excerpt = body[:300].decode("utf-8", "replace")
    return error_body(
        f"the provider answered {status}: {excerpt}", kind="upstream_error", code=status
    )


def _scrubbed(body: bytes, route: Route) -> bytes:
    if route.api_key and route.api_key.encode() in body:
        return body.replace(route.api_key.encode(), b"[redacted]")
    return body


def _copy_headers(upstream: aiohttp.ClientResponse, response: web.StreamResponse) -> None:
    for name in _RELAYED_HEADERS:
        value = upstream.headers.get(name)
        if value is not None:
            response.headers[name] = value
