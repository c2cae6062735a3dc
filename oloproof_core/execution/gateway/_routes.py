"""Where each role's calls go, which model they use, and what a token costs.

Model pinning: if the operator configured a model for the role (along its
fallbacks, as `oloproof.models` resolves it), every request of that role is sent
to that model, whatever the client asked for; otherwise the model the client
named is forwarded. A run's figures then always describe the model the operator
chose, and an unpinned role stays usable by clients that pick their own model.

Prices: the role's configured prices apply to its pinned model; the `prices`
table given to the gateway prices any other model by name (the forwarded name
first, then the name the provider answered with).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from oloproof_core.models import ROLES, ModelError, configured_model, settings_for

_OPENAI = "https://api.openai.com/v1"
# Asked for when the role names no model, so the rest of its settings still resolve;
# never forwarded: an unpinned role forwards the client's model.
_ANY_MODEL = "(the model each request names)"

Price = tuple[float, float]
"""USD per million input tokens, and per million output tokens."""


@dataclass(frozen=True, slots=True)
class Route:
    """One role's provider: endpoint, the operator's key, the pinned model and its price."""

    role: str
    base_url: str
    api_key: str | None
    model: str | None
    price: Price | None
    timeout_s: float

    @classmethod
    def from_settings(cls, role: str) -> Route:
        pinned = configured_model(role)
        settings = settings_for(role, fallback_model=None if pinned else _ANY_MODEL)
        price = None
        if pinned and settings.price_in is not None and settings.price_out is not None:
            price = (settings.price_in, settings.price_out)
        return cls(
            role=role,
            base_url=(settings.base_url or _OPENAI).rstrip("/"),
            api_key=settings.api_key,
            model=pinned,
            price=price,
            timeout_s=settings.timeout_s,
        )

    def url(self, endpoint: str) -> str:
        """`endpoint` is the path after /v1, e.g. /chat/completions."""
        return self.base_url + endpoint


def routes_from_settings(roles: tuple[str, ...] = ROLES) -> dict[str, Route]:
    """A route for every role whose settings resolve; a broken setting fails loudly."""
    routes = {}
    for role in roles:
        try:
            routes[role] = Route.from_settings(role)
        except ModelError as exc:
            raise ModelError(f"gateway route for the {role} role: {exc}") from exc
    return routes


@dataclass(frozen=True, slots=True)
class Pricing:
    """Turns tokens into dollars, or says why it cannot."""

    table: Mapping[str, Price]

    def cost(
        self,
        route: Route,
        forwarded: str | None,
        answered: str | None,
        tokens: tuple[int, int] | None,
    ) -> tuple[float | None, str | None]:
        if tokens is None:
            return None, "the provider returned no usage"
        price = self._price(route, forwarded, answered)
        if price is None:
            return None, f"no price configured for model {forwarded or answered or '(unnamed)'}"
        input_tokens, output_tokens = tokens
        return (input_tokens * price[0] + output_tokens * price[1]) / 1_000_000, None

    def _price(self, route: Route, forwarded: str | None, answered: str | None) -> Price | None:
        if route.model is not None and route.price is not None:
            return route.price  # the operator chose and priced this model
        for name in (forwarded, answered):
            if name is not None and name in self.table:
                return self.table[name]
        return None
