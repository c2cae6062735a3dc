"""Reading usage out of provider replies, whole or streamed.

Usage is read from what the provider sent, never from what the client reports, and a
figure that is missing or not a count stays missing (None) rather than becoming 0.
"""

from __future__ import annotations

import json
from typing import Any

from oloproof_core.execution.gateway._exchange import ReplyAssembler

Tokens = tuple[int, int]


def _count(value: Any) -> int | None:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        return None
    return value


def usage_of(reply: Any, *, has_output: bool = True) -> Tokens | None:
    """Input and output tokens of a reply object; embeddings have no output tokens."""
    usage = reply.get("usage") if isinstance(reply, dict) else None
    if not isinstance(usage, dict):
        return None
    prompt = _count(usage.get("prompt_tokens"))
    completion = _count(usage.get("completion_tokens")) if has_output else 0
    if prompt is None or completion is None:
        return None
    return prompt, completion


def model_of(reply: Any) -> str | None:
    model = reply.get("model") if isinstance(reply, dict) else None
    return model if isinstance(model, str) and model else None


def parse_json(body: bytes) -> Any:
    try:
        return json.loads(body)
    except ValueError:
        return None


class StreamMeter:
    """Follows a server-sent event stream: keeps its usage and model, hides usage asked for us.

    The gateway asks every stream for usage; a client that did not ask must see the
    stream it would have had without the gateway, so usage the gateway added is taken
    out again (the usage-only final chunk dropped, a usage field on a content chunk
    removed).

    The closing `[DONE]` event is held back until the stream has ended upstream, so
    the gateway has recorded the call before a client can see that it is over.
    """

    def __init__(self, *, client_wants_usage: bool) -> None:
        self.client_wants_usage = client_wants_usage
        self.tokens: Tokens | None = None
        self.model: str | None = None
        self.reply = ReplyAssembler()
        self._pending = bytearray()
        self._done = b""

    def feed(self, data: bytes) -> bytes:
        """Take bytes from upstream; return the complete events to pass on to the client."""
        self._pending += data
        out = bytearray()
        while (cut := _event_end(self._pending)) > 0:
            event = bytes(self._pending[:cut])
            del self._pending[:cut]
            out += self._event(event)
        return bytes(out)

    def flush(self) -> bytes:
        """What is left when the stream has ended upstream, the closing event included."""
        rest = bytes(self._pending)
        self._pending.clear()
        tail = self._event(rest) if rest.strip() else rest
        done, self._done = self._done, b""
        return tail + done

    def _event(self, event: bytes) -> bytes:
        text = event.strip()
        if not text.startswith(b"data:") or b"\n" in text:
            return event  # comments, other fields, multi-line data: relayed untouched
        payload = text[5:].strip()
        if payload == b"[DONE]":
            self._done += event
            return b""
        chunk = parse_json(payload)
        if not isinstance(chunk, dict):
            return event
        self.model = model_of(chunk) or self.model
        self.reply.feed(chunk)
        tokens = usage_of(chunk)
        if tokens is None:
            return event
        self.tokens = tokens
        if self.client_wants_usage:
            return event
        if not chunk.get("choices"):
            return b""
        chunk.pop("usage", None)
        return b"data: " + json.dumps(chunk, separators=(",", ":")).encode() + b"\n\n"


def _event_end(buffer: bytearray) -> int:
    """Where the first complete event ends (after its blank line), or 0."""
    ends = [i + len(sep) for sep in (b"\n\n", b"\r\n\r\n") if (i := buffer.find(sep)) >= 0]
    return min(ends, default=0)
