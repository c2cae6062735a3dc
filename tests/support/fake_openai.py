"""A small OpenAI-compatible chat server on 127.0.0.1 for tests: scripted replies, real HTTP.

    def test_something(fake_openai):
        fake_openai.enqueue(Status(429), Reply("PASS. Fine."))
        fake_openai.respond_with(lambda request: Reply("FAIL. " + request.user_text))
        ...
        assert fake_openai.request_count == 2

Replies come from the queue first (in order), then from the responder, then the
default reply. Every request body is kept, with the model asked for.

A `Reply` with `tool_calls` answers with those calls and no text. A request with
`"stream": true` is answered as server-sent events, one chunk per word, and with a
final usage chunk when the request asks for it (`stream_options.include_usage`), as
OpenAI does; `Reply(hold=event)` stops such a stream after its first word (after
`hold_after` events: the role's and the word's) until the event is set (or
`HOLD_LIMIT_S` has passed), so the stream stays open meanwhile. A
request to `/embeddings` gets a three-number embedding, with the reply's prompt tokens
as its usage. `Reply(model=...)` answers with a model name other than the one asked.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

HOLD_LIMIT_S = 10.0
"""A held stream goes on by itself after this long, so no test can leave it waiting forever."""


@dataclass(frozen=True)
class Reply:
    """A normal chat completion with the given text and usage figures."""

    text: str
    prompt_tokens: int = 10
    completion_tokens: int = 5
    usage: bool = True
    delay_s: float = 0.0
    tool_calls: tuple[dict[str, Any], ...] = ()
    model: str | None = None
    hold: threading.Event | None = None
    hold_after: int = 2


def tool_call(name: str, arguments: str, call_id: str = "call_1") -> dict[str, Any]:
    """One function call in the shape of a chat completion's `tool_calls` entry."""
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}


@dataclass(frozen=True)
class Status:
    """An HTTP error status (429, 500, ...) with an OpenAI-style error body."""

    code: int
    retry_after: float | None = None


@dataclass(frozen=True)
class Raw:
    """A raw body sent as is, for malformed replies."""

    body: str
    code: int = 200


ScriptedReply = Reply | Status | Raw


@dataclass
class Request:
    """One request the server received."""

    path: str
    body: dict[str, Any]
    headers: dict[str, str] = field(default_factory=dict)

    @property
    def model(self) -> str | None:
        return self.body.get("model")

    @property
    def messages(self) -> list[dict[str, Any]]:
        return list(self.body.get("messages") or [])

    @property
    def user_text(self) -> str:
        return "\n".join(str(m.get("content")) for m in self.messages if m.get("role") == "user")

    @property
    def system_text(self) -> str:
        return "\n".join(str(m.get("content")) for m in self.messages if m.get("role") == "system")


class FakeOpenAI:
    """The server's state; start() binds a free port on 127.0.0.1."""

    def __init__(self) -> None:
        self.requests: list[Request] = []
        self._queue: list[ScriptedReply] = []
        self._responder: Callable[[Request], ScriptedReply] | None = None
        self.default = Reply("OK")
        self._lock = threading.Lock()
        self.in_flight = 0
        self.max_in_flight = 0
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    @property
    def base_url(self) -> str:
        assert self._server is not None, "start() the server first"
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}/v1"

    @property
    def request_count(self) -> int:
        with self._lock:
            return len(self.requests)

    def enqueue(self, *replies: ScriptedReply) -> None:
        with self._lock:
            self._queue.extend(replies)

    def respond_with(self, responder: Callable[[Request], ScriptedReply] | None) -> None:
        with self._lock:
            self._responder = responder

    def models_asked(self) -> list[str | None]:
        with self._lock:
            return [request.model for request in self.requests]

    def start(self) -> FakeOpenAI:
        state = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                raw = self.rfile.read(length)
                try:
                    body = json.loads(raw or b"{}")
                except ValueError:
                    body = {"unparsed": raw.decode("utf-8", "replace")}
                request = Request(path=self.path, body=body, headers=dict(self.headers))
                reply = state._next(request)
                try:
                    state._send(self, reply, request)
                except (BrokenPipeError, ConnectionResetError):
                    return  # the client gave up waiting (timeout tests)

            def log_message(self, format: str, *args: Any) -> None:
                return  # keep test output clean

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(
            target=self._server.serve_forever,
            kwargs={"poll_interval": 0.02},
            name="fake-openai",
            daemon=True,
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def _next(self, request: Request) -> ScriptedReply:
        with self._lock:
            self.requests.append(request)
            if self._queue:
                return self._queue.pop(0)
            responder = self._responder
        if responder is not None:
            return responder(request)
        return self.default

    def _send(
        self, handler: BaseHTTPRequestHandler, reply: ScriptedReply, request: Request
    ) -> None:
        if isinstance(reply, Raw):
            self._write(handler, reply.code, reply.body.encode("utf-8"), {})
            return
        if isinstance(reply, Status):
            headers = {}
            if reply.retry_after is not None:
                headers["retry-after"] = str(reply.retry_after)
            body = {
                "error": {
                    "message": f"scripted status {reply.code}",
                    "type": "server_error",
                    "code": reply.code,
                }
            }
            self._write(handler, reply.code, json.dumps(body).encode(), headers)
            return
        with self._lock:
            self.in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self.in_flight)
        try:
            if reply.delay_s:
                time.sleep(reply.delay_s)
        finally:
            with self._lock:
                self.in_flight -= 1
        model = reply.model or request.model or "unknown"
        if request.path.endswith("/embeddings"):
            self._write(handler, 200, json.dumps(_embeddings(reply, model)).encode(), {})
            return
        if request.body.get("stream"):
            self._stream(handler, reply, request, model)
            return
        message: dict[str, Any] = {"role": "assistant", "content": reply.text}
        if reply.tool_calls:
            message = {"role": "assistant", "content": None, "tool_calls": list(reply.tool_calls)}
        completion: dict[str, Any] = {
            "id": f"chatcmpl-{len(self.requests)}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": model,
            "choices": [
                {
                    "index": 0,
                    "finish_reason": "tool_calls" if reply.tool_calls else "stop",
                    "message": message,
                }
            ],
        }
        if reply.usage:
            completion["usage"] = _usage(reply)
        self._write(handler, 200, json.dumps(completion).encode(), {})

    def _stream(
        self, handler: BaseHTTPRequestHandler, reply: Reply, request: Request, model: str
    ) -> None:
        """Server-sent events; the connection's close ends the body (HTTP/1.0)."""
        handler.send_response(200)
        handler.send_header("content-type", "text/event-stream")
        handler.end_headers()
        created = int(time.time())

        def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
            return {
                "id": f"chatcmpl-{len(self.requests)}",
                "object": "chat.completion.chunk",
                "created": created,
                "model": model,
                "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
            }

        chunks = [chunk({"role": "assistant", "content": ""})]
        if reply.tool_calls:
            calls = [{"index": i, **call} for i, call in enumerate(reply.tool_calls)]
            chunks.append(chunk({"tool_calls": calls}))
        else:
            words = reply.text.split(" ")
            chunks += [chunk({"content": w if i == 0 else " " + w}) for i, w in enumerate(words)]
        chunks.append(chunk({}, "tool_calls" if reply.tool_calls else "stop"))
        options = request.body.get("stream_options") or {}
        if reply.usage and options.get("include_usage"):
            chunks.append({**chunk({}), "choices": [], "usage": _usage(reply)})
        for sent, event in enumerate(chunks, start=1):
            handler.wfile.write(f"data: {json.dumps(event)}\n\n".encode())
            handler.wfile.flush()
            if sent == reply.hold_after and reply.hold is not None:
                reply.hold.wait(HOLD_LIMIT_S)
        handler.wfile.write(b"data: [DONE]\n\n")
        handler.wfile.flush()

    @staticmethod
    def _write(
        handler: BaseHTTPRequestHandler, code: int, body: bytes, headers: dict[str, str]
    ) -> None:
        handler.send_response(code)
        handler.send_header("content-type", "application/json")
        handler.send_header("content-length", str(len(body)))
        for name, value in headers.items():
            handler.send_header(name, value)
        handler.end_headers()
        handler.wfile.write(body)


def _embeddings(reply: Reply, model: str) -> dict[str, Any]:
    embedding = {"object": "embedding", "index": 0, "embedding": [0.1, 0.2, 0.3]}
    answer: dict[str, Any] = {"object": "list", "data": [embedding], "model": model}
    if reply.usage:
        answer["usage"] = {
            "prompt_tokens": reply.prompt_tokens,
            "total_tokens": reply.prompt_tokens,
        }
    return answer


def _usage(reply: Reply) -> dict[str, int]:
    return {
        "prompt_tokens": reply.prompt_tokens,
        "completion_tokens": reply.completion_tokens,
        "total_tokens": reply.prompt_tokens + reply.completion_tokens,
    }
