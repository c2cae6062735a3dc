"""A metering model gateway: any client's model calls, priced where the client cannot reach.

    from oloproof_core.execution.gateway import Gateway

    with Gateway() as gateway:
        key = gateway.issue_key("system", "worker-1")
        child_env = gateway.client_env(key)   # OPENAI_BASE_URL and OPENAI_API_KEY only
        gateway.bind(key, "case-7")
        ...
        for call in gateway.take_calls("case-7"):
            print(call.model, call.input_tokens, call.output_tokens, call.cost_usd)

Systems under test get a gateway key, never a provider key. The gateway, in the
parent process, forwards each call to the provider of the key's role with the
operator's credentials and records its tokens, latency and cost; see
docs/gateway.md for the attribution rules and the threat model.
"""

from oloproof_core.execution.gateway._keys import GatewayKeyError
from oloproof_core.execution.gateway._records import GatewayCall, RoleTotals
from oloproof_core.execution.gateway._routes import Price, Route, routes_from_settings
from oloproof_core.execution.gateway._server import Gateway

__all__ = [
    "Gateway",
    "GatewayCall",
    "GatewayKeyError",
    "Price",
    "RoleTotals",
    "Route",
    "routes_from_settings",
]
