"""The one model client: OpenAI-compatible chat with retries, a concurrency limit and metering.

Every call is attributed to the case in progress (if any) as a `ModelCall`, with
its tokens, cost and latency. Calls made while a system runs are always accounted
to the `system` role, whatever role the code asked for, so a system cannot move
its own cost onto a judge; calls made while judging are never the system's cost.
"""

from __future__ import annotations

import asyncio
import os
import random
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from oloproof_core.cases.context import current_case_or_none
from oloproof_core.cases.observations import ModelCall
from oloproof_core.models._reply import Reading, read_completion, read_stream
from oloproof_core.models._settings import ROLES, ModelError, ModelSettings, settings_for

_RETRY_STATUSES = frozenset({408, 409, 429})
_MAX_BACKOFF_S = 30.0
# Keyless servers (Ollama, llama.cpp, vLLM without --api-key) accept any key; a request
# without one is refused by some proxies.
_KEYLESS = "no-key"

if TYPE_CHECKING:
    from oloproof_core.models._http import ChatEndpoint

Message = Mapping[str, Any]


@dataclass(frozen=True, slots=True)
class ChatReply:
    """A model's answer and what it cost.

    A reply that only calls tools has text "" and the calls in `tool_calls`, each
    in the chat completions shape: {"id", "type": "function", "function": {"name",
    "arguments"}}.
    """

    text: str
    model: str
    role: str
    input_tokens: int
    output_tokens: int
    cost_usd: float | None
    latency_ms: float
    attempts: int
    tool_calls: tuple[dict[str, Any], ...] = ()

    def __str__(self) -> str:
        return self.text


_lock = threading.Lock()
_clients: dict[tuple[str | None, str, float], ChatEndpoint] = {}
# The HTTP client is imported on the first call (or by `prepare()`) only.
_limits: dict[tuple[str | None, str], threading.BoundedSemaphore] = {}


def _forget_after_fork() -> None:
    # A forked system process must not share the parent's open connections, nor
    # inherit a lock or a semaphore some other thread of the parent was holding.
    global _lock
    _lock = threading.Lock()
    _clients.clear()
    _limits.clear()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_after_fork)


def chat(messages: Sequence[Message], *, role: str = "system", **options: Any) -> ChatReply:
    """Send chat `messages` to the model of `role` and return its reply.

    `options` go to the chat completions request (temperature, max_tokens, tools,
    ...). With `stream=True` the reply is streamed, with its usage asked for, and
    joined before it is returned. Retries 408/409/429/5xx and connection errors with
    exponential backoff; raises ModelError when the call fails for good or the reply
    has neither text nor tool calls.
    """
    settings = settings_for(role)
    endpoint = _client(settings)
    # Timed from here: making the client (and importing it) is not the call.
    started = time.perf_counter()
    reading, attempts = _create_with_retries(endpoint, settings, messages, options)
    latency_ms = (time.perf_counter() - started) * 1000.0
    input_tokens, output_tokens = reading.input_tokens, reading.output_tokens
    cost = settings.cost_usd(input_tokens, output_tokens) if reading.metered else None
    accounted = _record(role, settings.model, input_tokens, output_tokens, cost, latency_ms)
    return ChatReply(
        text=reading.text,
        model=settings.model,
        role=accounted,
        input_tokens=input_tokens,
        output_tokens=output_tokens,
        cost_usd=cost,
        latency_ms=latency_ms,
        attempts=attempts,
        tool_calls=reading.tool_calls,
    )


def prepare(roles: Sequence[str] = ROLES) -> None:
    """Do the one-off work of a first call now, before anything is timed.

    Imports the HTTP client and makes the endpoint of every role in `roles` that has
    a model configured; a process calls this before it starts serving cases, so that
    the first case is not charged for it.
    """
    for role in roles:
        try:
            settings = settings_for(role)
        except ModelError:
            continue  # a role with no model is not called
        _client(settings)


async def achat(messages: Sequence[Message], *, role: str = "system", **options: Any) -> ChatReply:
    """`chat` for async code; runs in a worker thread, keeping the current case."""
    return await asyncio.to_thread(chat, messages, role=role, **options)


def complete(
    prompt: str, *, role: str = "system", instructions: str | None = None, **options: Any
) -> str:
    """One user prompt (and optional system instructions) in, the reply's text out."""
    messages: list[Message] = []
    if instructions is not None:
        messages.append({"role": "system", "content": instructions})
    messages.append({"role": "user", "content": prompt})
    return chat(messages, role=role, **options).text


def llm(instructions: str, input: Any = None, **options: Any) -> str:
    """Ask the metric model (the reflection model if no metric model is set).

    `instructions` become the system message and `input` the user message.
    """
    if input is None:
        return complete(str(instructions), role="metric", **options)
    return complete(str(input), role="metric", instructions=str(instructions), **options)


def _client(settings: ModelSettings) -> ChatEndpoint:
    from oloproof_core.models._http import ChatEndpoint

    key = (settings.base_url, settings.api_key or _KEYLESS, settings.timeout_s)
    with _lock:
        client = _clients.get(key)
        if client is None:
            client = ChatEndpoint(
                base_url=settings.base_url,
                api_key=settings.api_key or _KEYLESS,
                timeout_s=settings.timeout_s,
            )
            _clients[key] = client
    return client


def _limit(settings: ModelSettings) -> threading.BoundedSemaphore:
    key = (settings.base_url, settings.model)
    with _lock:
        limit = _limits.get(key)
        if limit is None:
            limit = threading.BoundedSemaphore(settings.concurrency)
            _limits[key] = limit
    return limit


def _create_with_retries(
    endpoint: ChatEndpoint,
    settings: ModelSettings,
    messages: Sequence[Message],
    options: Mapping[str, Any],
) -> tuple[Reading, int]:
    from oloproof_core.models._http import CallFailedError, MalformedReplyError

    limit = _limit(settings)
    attempt = 0
    while True:
        attempt += 1
        try:
            with limit:
                return _create(endpoint, settings, messages, options), attempt
        except CallFailedError as exc:
            status = exc.status
            retryable = status is None or status in _RETRY_STATUSES or status >= 500
            where = f"{settings.model} at {settings.base_url or 'the default endpoint'}"
            if not retryable:
                raise ModelError(f"model call to {where} failed: {exc}") from exc
            if attempt > settings.max_retries:
                raise ModelError(
                    f"model call to {where} failed after {attempt} attempts: {exc}"
                ) from exc
            time.sleep(_backoff(settings.backoff_s, attempt, exc))
        except MalformedReplyError as exc:
            raise ModelError(f"malformed reply from {settings.model}: {exc}") from exc


def _create(
    endpoint: ChatEndpoint,
    settings: ModelSettings,
    messages: Sequence[Message],
    options: Mapping[str, Any],
) -> Reading:
    """One request; a stream is read to its end here, so a broken stream is retried too."""
    body = {**options, "model": settings.model, "messages": list(messages)}
    if not options.get("stream"):
        return read_completion(endpoint.create(body), settings)
    body["stream_options"] = {**(options.get("stream_options") or {}), "include_usage": True}
    with endpoint.stream(body) as chunks:
        return read_stream(chunks, settings)


def _backoff(base_s: float, attempt: int, exc: Exception) -> float:
    """Exponential backoff with jitter; a server's Retry-After wins when it says more."""
    delay = min(_MAX_BACKOFF_S, base_s * 2 ** (attempt - 1)) * random.uniform(0.8, 1.2)
    header = getattr(exc, "retry_after", None)
    try:
        asked = float(header) if header is not None else 0.0
    except ValueError:
        asked = 0.0
    return float(max(delay, min(asked, _MAX_BACKOFF_S)))


def _record(
    role: str,
    model: str,
    input_tokens: int,
    output_tokens: int,
    cost: float | None,
    latency_ms: float,
) -> str:
    context = current_case_or_none()
    if context is None:
        return role
    if context.phase == "system":
        accounted = "system"  # whatever role the system asked for: its cost is its own
    elif role == "system":
        accounted = "metric"  # an evaluator's call is never the system's cost
    else:
        accounted = role
    context.record_model_call(
        ModelCall(
            role=accounted,
            model=model,
            input_tokens=input_tokens,
            output_tokens=output_tokens,
            cost_usd=cost,
            latency_ms=latency_ms,
        )
    )
    return accounted
