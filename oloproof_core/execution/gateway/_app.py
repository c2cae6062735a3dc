"""The gateway's HTTP application: aiohttp serving the routes on an already bound socket.

Kept apart from `Gateway` so that a run whose system loads no model client never
imports aiohttp (about a tenth of a second of every run's start-up).
"""

from __future__ import annotations

import socket

from aiohttp import web

from oloproof_core.execution.gateway._forward import Forwarder
from oloproof_core.execution.gateway._keys import GATEWAY_STOPPED, KeyRing
from oloproof_core.execution.gateway._records import Ledger
from oloproof_core.execution.gateway._routes import Pricing, Route

_MAX_BODY = 64 * 1024 * 1024  # long contexts with images inline are large


class Site:
    """The running application and its pool of upstream connections."""

    def __init__(self, forwarder: Forwarder, runner: web.AppRunner) -> None:
        self.forwarder = forwarder
        self.runner = runner

    async def close(self) -> None:
        """Stop serving; a call still open is cut and recorded first, never lost."""
        keys = self.forwarder.keys
        await self.forwarder.cut(keys.open_tickets(), GATEWAY_STOPPED)
        await self.runner.cleanup()
        await self.forwarder.close()


async def open_site(
    socks: list[socket.socket],
    keys: KeyRing,
    ledger: Ledger,
    routes: dict[str, Route],
    pricing: Pricing,
) -> Site:
    """Serve the OpenAI-compatible routes on `socks` (bound and listening) from this loop."""
    forwarder = Forwarder(keys, ledger, routes, pricing)
    await forwarder.open()
    app = web.Application(client_max_size=_MAX_BODY)
    app.router.add_get("/v1/models", forwarder.models)
    for path in ("/v1/chat/completions", "/v1/completions", "/v1/embeddings"):
        app.router.add_post(path, forwarder.forward)
    # No access log: it would cost more than the forwarding on every call.
    runner = web.AppRunner(app, access_log=None, handle_signals=False)
    await runner.setup()
    for sock in socks:
        await web.SockSite(runner, sock).start()
    return Site(forwarder, runner)
