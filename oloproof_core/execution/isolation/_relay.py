"""Inside a sandbox: the gateway's address on loopback, relayed to its socket outside.

A sandboxed system has a network namespace of its own, with loopback and nothing else,
so the address its model client was given (`OPENAI_BASE_URL`, `http://127.0.0.1:PORT/
v1`) would lead nowhere. Before the system is imported, its process listens on that
same address inside the namespace and carries each connection, byte for byte, to the
gateway's Unix socket bound into the sandbox. Any client library then works unchanged;
any other address fails, so a model call is metered or it does not happen.
"""

from __future__ import annotations

import contextlib
import os
import select
import socket
import threading
from urllib.parse import urlsplit

SOCKET_VARIABLE = "OLOPROOF_GATEWAY_SOCKET"
"""Set in a sandboxed system's process: the gateway's socket inside the sandbox."""

_CHUNK = 1 << 16


def relay_gateway() -> None:
    """Listen on the gateway's loopback address and relay it, if this is a sandbox."""
    socket_path = os.environ.get(SOCKET_VARIABLE)
    url = os.environ.get("OLOPROOF_GATEWAY_URL")
    if not socket_path or not url:
        return
    address = urlsplit(url)
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind((address.hostname or "127.0.0.1", address.port or 80))
    listener.listen(128)
    threading.Thread(
        target=_accept, args=(listener, socket_path), name="oloproof-gateway-relay", daemon=True
    ).start()


def _accept(listener: socket.socket, socket_path: str) -> None:
    while True:
        client, _ = listener.accept()
        threading.Thread(
            target=_carry, args=(client, socket_path), name="oloproof-relay", daemon=True
        ).start()


def _carry(client: socket.socket, socket_path: str) -> None:
    """Copy bytes both ways until either side closes."""
    with client, socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as gateway:
        try:
            gateway.connect(socket_path)
        except OSError:
            return  # the client sees its connection closed: the call fails, unmetered nowhere
        peers = {client: gateway, gateway: client}
        open_ends = [client, gateway]
        while open_ends:
            readable, _, _ = select.select(open_ends, [], [])
            for end in readable:
                try:
                    data = end.recv(_CHUNK)
                except OSError:
                    data = b""
                if data:
                    peers[end].sendall(data)
                    continue
                # One side finished sending: pass that on, keep reading the other.
                open_ends.remove(end)
                with contextlib.suppress(OSError):
                    peers[end].shutdown(socket.SHUT_WR)
