"""The gateway: an OpenAI-compatible endpoint on 127.0.0.1, run by the parent process.

It serves from its own event loop in a background thread, so the engine's ordinary
synchronous code can start it, hand out keys, bind cases and read the ledger while
children call it over HTTP. It can take its port first and serve later (`listen`,
then `serve`): children are told the address when they start, and the HTTP server
(aiohttp) is loaded only for systems that reach a model. Sandboxed children, which
have no network, reach the same server through a Unix socket (`listen_unix`) bound
into their sandbox.
"""

from __future__ import annotations

import contextlib
import os
import select
import shutil
import socket
import tempfile
import threading
import time
from collections.abc import Mapping
from types import TracebackType
from typing import TYPE_CHECKING

from oloproof_core.execution.gateway._keys import CASE_ENDED, RUN_ENDED, KeyRing, Ticket
from oloproof_core.execution.gateway._records import GatewayCall, Ledger, RoleTotals
from oloproof_core.execution.gateway._routes import Price, Pricing, Route, routes_from_settings

if TYPE_CHECKING:
    import asyncio

    from oloproof_core.execution.gateway._app import Site

_HOST = "127.0.0.1"
_BACKLOG = 128


class Gateway:
    """A metering model gateway for one run.

        with Gateway() as gateway:
            key = gateway.issue_key("system", "worker-1")
            env = gateway.client_env(key)          # all a child process gets
            gateway.bind(key, "case-7")
            ...                                     # the child calls the model
            calls = gateway.take_calls("case-7")

    `routes` defaults to what `oloproof.models` settings say for every role, read when
    the gateway starts serving; `prices` (USD per million input and output tokens, by
    model name) prices models a role does not pin.
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
        self._sock: socket.socket | None = None
        self._unix: socket.socket | None = None
        self._unix_path: str | None = None
        self._port: int | None = None
        self._lock = threading.Lock()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._site: Site | None = None
        self._watcher: threading.Thread | None = None
        self._wake: tuple[int, int] | None = None
        self.started = "not started"
        """How serving began: "not started", "when asked" or "by a model call"."""
        self.start_ms: float | None = None
        """How long the HTTP server took to start, in milliseconds."""
        self.failure: str | None = None
        """Why serving on a first model call failed (then those calls failed too)."""

    # -- lifecycle ---------------------------------------------------------------

    def listen(self) -> Gateway:
        """Take an ephemeral port of 127.0.0.1 without serving yet.

        Connections made before `serve` wait in the socket's backlog, not refused.
        """
        if self._sock is None:
            sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            sock.bind((_HOST, 0))
            sock.listen(_BACKLOG)
            self._sock, self._port = sock, sock.getsockname()[1]
        return self

    def listen_unix(self) -> str:
        """Also take a Unix socket (call before `serve`); returns its path.

        It lies alone in a private folder, open to every user: a sandbox's process may
        run as another user, and can only connect, not replace it (its bind is read-only).
        """
        if self._unix_path is None:
            if self._thread is not None:
                raise RuntimeError("listen_unix() must come before serve()")
            folder = tempfile.mkdtemp(prefix="oloproof-gateway-")
            os.chmod(folder, 0o755)
            path = os.path.join(folder, "gateway.sock")
            sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            sock.bind(path)
            os.chmod(path, 0o666)
            sock.listen(_BACKLOG)
            self._unix, self._unix_path = sock, path
        return self._unix_path

    def start(self) -> Gateway:
        """Listen and serve; returns once requests are accepted."""
        return self.listen().serve()

    def serve(self, *, reason: str = "when asked") -> Gateway:
        """Serve requests from now on (once; any thread); returns once they are accepted."""
        with self._lock:
            if self._thread is not None:
                return self
            began = time.perf_counter()
            sock = self.listen()._sock
            assert sock is not None
            # Imported here: aiohttp (and asyncio) is a tenth of a second no model-free run
            # should pay.
            import asyncio

            from oloproof_core.execution.gateway._app import open_site

            routes = self._given_routes
            routes = routes if routes is not None else routes_from_settings()
            loop = asyncio.new_event_loop()
            thread = threading.Thread(target=loop.run_forever, name="oloproof-gateway", daemon=True)
            thread.start()
            self._loop, self._thread = loop, thread
            socks = [sock] if self._unix is None else [sock, self._unix]
            opening = open_site(socks, self._keys, self._ledger, routes, self._pricing)
            try:
                self._site = asyncio.run_coroutine_threadsafe(opening, loop).result()
            except BaseException:
                self._stop_serving()
                raise
            self.started = reason
            self.start_ms = (time.perf_counter() - began) * 1000.0
        self._wake_watcher()
        return self

    def serve_when_called(self) -> None:
        """Start serving as soon as a connection waits, if nothing has started it before:
        for a system that reaches its model without loading a model client at import."""
        if self._watcher is not None or self._thread is not None:
            return
        sock = self.listen()._sock
        assert sock is not None
        self._wake = os.pipe()
        listening = [sock.fileno()] + ([] if self._unix is None else [self._unix.fileno()])
        wake = self._wake[0]

        def watch() -> None:
            readable, _, _ = select.select([*listening, wake], [], [])
            if wake not in readable and self._thread is None:
                try:
                    self.serve(reason="by a model call")
                except Exception as exc:  # no thread traceback: the run's provenance says it
                    self.failure = f"{type(exc).__name__}: {exc}"
                    with self._lock:  # the waiting calls fail now rather than time out
                        self._close_sockets()

        self._watcher = threading.Thread(target=watch, name="oloproof-gateway-watch", daemon=True)
        self._watcher.start()

    def stop(self) -> None:
        """Stop serving and close the upstream pool; calls recorded so far stay readable."""
        self._wake_watcher()
        if self._watcher is not None and self._watcher is not threading.current_thread():
            self._watcher.join()
        self._watcher = None
        if self._wake is not None:
            for fd in self._wake:
                os.close(fd)
            self._wake = None
        with self._lock:
            self._stop_serving()
            self._close_sockets()

    def _close_sockets(self) -> None:
        if self._sock is not None:
            self._sock.close()
            self._sock = None
        if self._unix is not None:
            self._unix.close()
            self._unix = None
        if self._unix_path is not None:
            with contextlib.suppress(OSError):
                shutil.rmtree(os.path.dirname(self._unix_path))
            self._unix_path = None

    def _stop_serving(self) -> None:
        loop, thread, site = self._loop, self._thread, self._site
        if loop is None or thread is None:
            return
        import asyncio  # loaded by `serve`, which made the loop

        if loop.is_running():
            if site is not None:
                asyncio.run_coroutine_threadsafe(site.close(), loop).result()
            loop.call_soon_threadsafe(loop.stop)
        thread.join()
        loop.close()
        self._loop = self._thread = self._site = None

    def _wake_watcher(self) -> None:
        if self._wake is not None:
            os.write(self._wake[1], b"x")

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
        if self._port is None:
            raise RuntimeError("listen() or start() the gateway first")
        return f"http://{_HOST}:{self._port}/v1"

    def client_env(self, key: str) -> dict[str, str]:
        """The environment a child process needs to reach its models through the gateway."""
        return {"OPENAI_BASE_URL": self.base_url, "OPENAI_API_KEY": key}

    # -- keys and attribution ----------------------------------------------------

    def issue_key(self, role: str, label: str) -> str:
        """A fresh key for `role`, holding one case at a time (`bind`)."""
        return self._keys.issue(role, label)

    def revoke_key(self, key: str) -> None:
        """End a key (a process key, or one case's); calls made with it are refused."""
        self._keys.revoke(key)

    def bind(self, key: str, case_id: str) -> str:
        """Calls made with `key` from now on belong to `case_id`, until it ends; returns the
        case's own key, whose calls belong to this case alone, and to none once it ended."""
        return self._keys.bind(key, case_id)

    def unbind(self, key: str, case_id: str | None = None) -> None:
        """End `case_id` on `key` (or the case it holds, when None): the key's calls belong
        to no case until the next `bind`, and any call still open for the case is cut and
        recorded now, with what had passed through."""
        self._cut(self._keys.unbind(key, case_id))

    def cut_open_calls(self, reason: str = RUN_ENDED) -> None:
        """Cut every call still open, of any key, and record each with what had passed
        through: the end of a run, whose figures must not wait for a stream left open."""
        self._cut(self._keys.open_tickets(), reason)

    def _cut(self, tickets: list[Ticket], reason: str = CASE_ENDED) -> None:
        loop, site = self._loop, self._site
        if not tickets or loop is None or site is None:
            return  # nothing open (a request is only open while the server runs)
        if threading.current_thread() is self._thread:
            raise RuntimeError("calls are cut from outside the gateway's own thread")
        import asyncio  # loaded by `serve`, which made the loop

        asyncio.run_coroutine_threadsafe(site.forwarder.cut(tickets, reason), loop).result()

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
