"""A minimal OpenAI-compatible provider on aiohttp, for the gateway benchmark.

The tests' fake provider (a ThreadingHTTPServer, a thread and a fresh connection
per request) tops out below the gateway, so the throughput figure would measure it
instead. This one answers every chat completion with the same small reply over
kept-alive connections. Prints its port, then serves until killed.

Run: .venv/bin/python -m bench.gateway._upstream
"""

from __future__ import annotations

import json
import socket

from aiohttp import web

REPLY = json.dumps(
    {
        "id": "chatcmpl-bench",
        "object": "chat.completion",
        "created": 0,
        "model": "bench-model",
        "choices": [
            {
                "index": 0,
                "finish_reason": "stop",
                "message": {"role": "assistant", "content": "A short answer of a few words."},
            }
        ],
        "usage": {"prompt_tokens": 42, "completion_tokens": 8, "total_tokens": 50},
    }
).encode()


async def completion(request: web.Request) -> web.Response:
    await request.read()
    return web.Response(body=REPLY, content_type="application/json")


def main() -> None:
    app = web.Application()
    app.router.add_post("/v1/chat/completions", completion)
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    print(sock.getsockname()[1], flush=True)
    web.run_app(app, sock=sock, access_log=None, print=None)


if __name__ == "__main__":
    main()
