"""What a metered system's process is told about its models: the gateway, never a provider."""

from __future__ import annotations

import warnings
from collections.abc import Iterable
from typing import TYPE_CHECKING

from oloproof_core.execution.isolation._relay import SOCKET_VARIABLE
from oloproof_core.execution.isolation._sandbox import GATEWAY_SOCKET
from oloproof_core.execution.isolation._sandbox_choice import (
    SandboxChoice,
    UnprotectedRunWarning,
)

if TYPE_CHECKING:
    from oloproof_core.execution.gateway import Gateway

GATEWAY_URL_VARIABLE = "OLOPROOF_GATEWAY_URL"
"""Set in a system's process: the gateway its model calls go to."""


def metered_environment(gateway: Gateway, key: str, *, sandboxed: bool) -> dict[str, str]:
    """The variables a system's process gets to reach its models through `gateway` with
    its process's `key`."""
    url = gateway.base_url
    environment = {
        **gateway.client_env(key),
        "OLOPROOF_SYSTEM_BASE_URL": url,
        "OLOPROOF_SYSTEM_API_KEY": key,
        GATEWAY_URL_VARIABLE: url,
    }
    if sandboxed:  # no network inside: the socket, relayed
        environment[SOCKET_VARIABLE] = GATEWAY_SOCKET
    return environment


def gateway_and_sandbox(
    mode: str, hidden: Iterable[str], *, say_unprotected: bool = True
) -> tuple[Gateway, SandboxChoice]:
    """A listening gateway (its port now, so that every process is told where its models
    are; its server once a process loads a model client, or on a first call) and the
    sandbox its processes reach it from. `say_unprotected=False`: a run without a
    sandbox is said to be unprotected later, by the pool that takes them."""
    # Imported here: a system's own process imports this package, never the server.
    from oloproof_core.execution.gateway import Gateway

    gateway = Gateway().listen()
    try:
        with warnings.catch_warnings():
            if not say_unprotected:
                warnings.simplefilter("ignore", UnprotectedRunWarning)
            choice = SandboxChoice.choose(mode, hidden=hidden, gateway_socket=gateway.listen_unix)
    except BaseException:
        gateway.stop()
        raise
    gateway.serve_when_called()
    return gateway, choice
