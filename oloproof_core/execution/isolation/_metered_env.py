"""What a metered system's process is told about its models: the gateway, never a provider."""

from __future__ import annotations

from typing import TYPE_CHECKING

from oloproof_core.execution.isolation._relay import SOCKET_VARIABLE
from oloproof_core.execution.isolation._sandbox import GATEWAY_SOCKET

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
