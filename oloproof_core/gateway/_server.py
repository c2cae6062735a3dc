"""The gateway: an OpenAI-compatible endpoint on 127.0.0.1, run by the parent process.

It serves from its own event loop in a background thread, so the engine's ordinary
synchronous code can start it, hand out keys, bind cases and read the ledger while
children call it over HTTP.
"""

from __future__ import annotations

import asyncio
import socket
import threading
from collections.abc import Mapping
from types import TracebackType

from aiohttp import web

from oloproof_core.gateway._forward import Forwarder
from oloproof_core.gateway._keys import KeyRing
from oloproof_core.gateway._records import GatewayCall, Ledger, RoleTotals
from oloproof_core.gateway._routes import Price, Pricing, Route, routes_from_settings

_HOST = "127.0.0.1"
_MAX_BODY = 64 * 1024 * 1024  # long contexts with images inline are large


class Gateway:
    """A metering model gateway for one run.

        with Gateway() as gateway:
            key = gateway.issue_key("system", "worker-1")
            env = gateway.client_env(key)          # all a child process gets
            gateway.bind(key, "case-7")
            ...                                     # the child calls the model
            calls = gateway.take_calls("case-7")

    `routes` defaults to what `oloproof.models` settings say for every role, read when
    the gateway starts; `prices` (USD per million input and output tokens, by model
    name) prices models a role does not pin.
    """

    def __init__(
        self,
        *,
        routes: Mapping[str, Route] | None = None,
        prices: Mapping[str, Price] | None = None,
    ) -> None:
        self._given_routes = None if routes is None else dict(routes)
        self._pricing = Pricing(dict(prices or {}))
        self._keys = KeyRing()
        self._ledger = Ledger()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._runner: web.AppRunner | None = None
        self._forwarder: Forwarder | None = None
        self._port: int | None = None

    # -- lifecycle ---------------------------------------------------------------

    def start(self) -> Gateway:
        """Listen on an ephemeral port of 127.0.0.1; returns once requests are accepted."""
        if self._thread is not None:
            return self
        routes = self._given_routes if self._given_routes is not None else routes_from_settings()
        self._forwarder = Forwarder(self._keys, self._ledger, routes, self._pricing)
        loop = asyncio.new_event_loop()
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((_HOST, 0))
        self._port = sock.getsockname()[1]
        thread = threading.Thread(target=loop.run_forever, name="oloproof-gateway", daemon=True)
        thread.start()
        self._loop, self._thread = loop, thread
        try:
            asyncio.run_coroutine_threadsafe(self._serve(sock), loop).result()
        except BaseException:
            self.stop()
            raise
        return self

    def stop(self) -> None:
        """Stop serving and close the upstream pool; calls recorded so far stay readable."""
        loop, thread = self._loop, self._thread
        if loop is None or thread is None:
            return
        if loop.is_running():
            asyncio.run_coroutine_threadsafe(self._shutdown(), loop).result()
            loop.call_soon_threadsafe(loop.stop)
        thread.join()
        loop.close()
        self._loop = self._thread = None

    def __enter__(self) -> Gateway:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.stop()

    @property
    def base_url(self) -> str:
        """What a client's OPENAI_BASE_URL must be."""
        if self._port is None or self._thread is None:
            raise RuntimeError("start() the gateway first")
        return f"http://{_HOST}:{self._port}/v1"

    def client_env(self, key: str) -> dict[str, str]:
        """The environment a child process needs to reach its models through the gateway."""
        return {"OPENAI_BASE_URL": self.base_url, "OPENAI_API_KEY": key}

    # -- keys and attribution ----------------------------------------------------

    def issue_key(self, role: str, label: str, *, concurrent: bool = False) -> str:
        """A fresh key for `role`; `concurrent` keys attribute calls by the case header."""
        return self._keys.issue(role, label, concurrent=concurrent)

    def revoke_key(self, key: str) -> None:
        self._keys.revoke(key)

    def bind(self, key: str, case_id: str) -> None:
        """Calls made with `key` from now on belong to `case_id` (see the attribution rule)."""
        self._keys.bind(key, case_id)

    def unbind(self, key: str, case_id: str | None = None) -> None:
        """Close `case_id` for `key`, or every case of the key when None."""
        self._keys.unbind(key, case_id)

    # -- the ledger --------------------------------------------------------------

    def calls(self, case_id: str | None = None) -> list[GatewayCall]:
        """Every call kept so far, or only those of `case_id`."""
        return self._ledger.calls(case_id)

    def take_calls(self, case_id: str) -> list[GatewayCall]:
        """Remove and return the calls of `case_id`; the totals keep counting them."""
        return self._ledger.take(case_id)

    def take_unattributed(self) -> list[GatewayCall]:
        """Remove and return the calls that belonged to no case; the totals keep them."""
        return self._ledger.take(None)

    def totals(self) -> dict[str, RoleTotals]:
        """What each role spent over the whole run, attributed to a case or not."""
        return self._ledger.totals()

    # -- on the gateway's loop ---------------------------------------------------

    async def _serve(self, sock: socket.socket) -> None:
        assert self._forwarder is not None
        await self._forwarder.open()
        app = web.Application(client_max_size=_MAX_BODY)
        app.router.add_get("/v1/models", self._forwarder.models)
        for path in ("/v1/chat/completions", "/v1/completions", "/v1/embeddings"):
            app.router.add_post(path, self._forwarder.forward)
        # No access log: it would cost more than the forwarding on every call.
        runner = web.AppRunner(app, access_log=None, handle_signals=False)
        await runner.setup()
        await web.SockSite(runner, sock).start()
        self._runner = runner

    async def _shutdown(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None
        if self._forwarder is not None:
            await self._forwarder.close()
