"""Which model serves which role: settings from the environment and from `configure()`.

Roles:
    system      the system under test's own calls (their cost is the system's cost)
    reflection  the model an optimizer reflects with
    metric      `llm()` called from a metric; falls back to the reflection model
    judge       `RubricJudge`; falls back to the metric model, then the reflection model
    user        the simulated user of a scenario conversation, called by the run's own
                process between the system's turns (its cost is never the system's)

For a role, the first role in its fallback chain that names a model is used; each
other setting comes from the first role along the chain up to that one that sets it,
or failing that from the shared `default` settings. Environment variables, per role
(SYSTEM, REFLECTION, METRIC, JUDGE, USER) and for the shared default (DEFAULT):

    OLOPROOF_<ROLE>_MODEL        model name, e.g. gpt-4o-mini
    OLOPROOF_<ROLE>_BASE_URL     OpenAI-compatible endpoint, e.g. http://localhost:11434/v1
    OLOPROOF_<ROLE>_API_KEY      key (keyless local servers need none)
    OLOPROOF_<ROLE>_PRICE_IN     USD per million input tokens
    OLOPROOF_<ROLE>_PRICE_OUT    USD per million output tokens
    OLOPROOF_<ROLE>_TIMEOUT      seconds per request (default 60)
    OLOPROOF_<ROLE>_MAX_RETRIES  retries on 429 / 5xx / connection errors (default 4)
    OLOPROOF_<ROLE>_CONCURRENCY  requests in flight at once to this model (default 8)

Settings given to `configure()` take precedence over the environment.
"""

from __future__ import annotations

import math
import os
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from oloproof_core.errors import OloproofError

ROLES = ("system", "reflection", "metric", "judge")
"""The roles code under test may call: systems, metrics and judges (and their processes)."""
SIMULATED_USER = "user"
"""The role that plays the user of a scenario conversation; only the run's process calls it."""
DEFAULT = "default"
FALLBACKS: Mapping[str, tuple[str, ...]] = {
    "system": ("system",),
    "reflection": ("reflection",),
    "metric": ("metric", "reflection"),
    "judge": ("judge", "metric", "reflection"),
    SIMULATED_USER: (SIMULATED_USER,),
}
FIELDS: Mapping[str, str] = {
    "model": "MODEL",
    "base_url": "BASE_URL",
    "api_key": "API_KEY",
    "price_in": "PRICE_IN",
    "price_out": "PRICE_OUT",
    "timeout_s": "TIMEOUT",
    "max_retries": "MAX_RETRIES",
    "concurrency": "CONCURRENCY",
    "backoff_s": "BACKOFF",
}
_NUMERIC = {
    "price_in": float,
    "price_out": float,
    "timeout_s": float,
    "max_retries": int,
    "concurrency": int,
    "backoff_s": float,
}
_DEFAULTS: Mapping[str, Any] = {
    "timeout_s": 60.0,
    "max_retries": 4,
    "concurrency": 8,
    "backoff_s": 0.5,
}


class ModelError(OloproofError):
    """A model call could not be made or its reply could not be used."""


@dataclass(frozen=True, slots=True)
class ModelSettings:
    """Everything needed to call one model; `role` is the role whose model it is."""

    role: str
    model: str
    base_url: str | None
    api_key: str | None
    price_in: float | None
    price_out: float | None
    timeout_s: float
    max_retries: int
    concurrency: int
    backoff_s: float

    def cost_usd(self, input_tokens: int, output_tokens: int) -> float | None:
        """The call's cost, or None when this model has no price configured."""
        if self.price_in is None or self.price_out is None:
            return None
        return (input_tokens * self.price_in + output_tokens * self.price_out) / 1_000_000


_lock = threading.Lock()
_configured: dict[str, dict[str, Any]] = {}


def configure(role: str = DEFAULT, **settings: Any) -> None:
    """Set a role's model settings in code, e.g. configure("metric", model="gpt-4o-mini").

    Keys: model, base_url, api_key, price_in, price_out (USD per million tokens),
    timeout_s, max_retries, concurrency, backoff_s (first retry delay). A value of
    None removes a setting given earlier.
    """
    _check_role(role, allow_default=True)
    for key, value in settings.items():
        if key not in FIELDS:
            raise ModelError(
                f"configure({role!r}): unknown setting {key!r}; settings are {', '.join(FIELDS)}"
            )
        if value is not None:
            _checked(key, value, f"configure({role!r}, {key}=...)")
    with _lock:
        current = _configured.setdefault(role, {})
        for key, value in settings.items():
            if value is None:
                current.pop(key, None)
            else:
                current[key] = value


def reset_configuration() -> None:
    """Forget every setting given to `configure()` (the environment still applies)."""
    with _lock:
        _configured.clear()


def settings_for(role: str, *, fallback_model: str | None = None) -> ModelSettings:
    """Resolve the model for `role`, following its fallback chain.

    With `fallback_model`, a role that has no model configured uses that one instead of
    failing (the gateway forwards the model a client asked for). No price applies to it:
    a price is set for a named model, and a price set along a chain that names no model
    is a price for no model in particular.
    """
    _check_role(role, allow_default=False)
    chain = FALLBACKS[role]
    source = next((candidate for candidate in chain if _setting(candidate, "model")), None)
    # The role's own settings first, then those of the roles it falls back through up to
    # the one whose model it uses, then the shared default.
    reach = chain if source is None else chain[: chain.index(source) + 1]
    layers = [*reach, DEFAULT]
    values: dict[str, Any] = {}
    for key in FIELDS:
        found = next((v for layer in layers if (v := _setting(layer, key)) is not None), None)
        values[key] = _DEFAULTS.get(key) if found is None else found
    if not values["model"] and fallback_model is not None:
        values.update(model=fallback_model, price_in=None, price_out=None)
    if not values["model"]:
        names = " or ".join(f"OLOPROOF_{candidate.upper()}_MODEL" for candidate in chain)
        raise ModelError(
            f"no model is configured for the {role} role: set {names} (or "
            "OLOPROOF_DEFAULT_MODEL), or call "
            f"oloproof.models.configure({chain[0]!r}, model=..., base_url=...)"
        )
    return ModelSettings(role=source or DEFAULT, **values)


def configured_model(role: str) -> str | None:
    """The model the operator named for `role` (along its fallbacks), or None."""
    try:
        return settings_for(role).model
    except ModelError:
        return None


def model_identity(role: str) -> dict[str, str | None]:
    """What decides the answers `role` gets: its model and endpoint.

    Part of the version of every evaluator that calls the role, so that pointing the
    role at another model or server re-judges instead of reusing cached verdicts.
    """
    try:
        settings = settings_for(role)
    except ModelError:
        return {"model": None, "base_url": None}
    return {"model": settings.model, "base_url": settings.base_url}


def _setting(layer: str, key: str) -> Any:
    with _lock:
        value = _configured.get(layer, {}).get(key)
    if value is not None:
        return value
    name = f"OLOPROOF_{layer.upper()}_{FIELDS[key]}"
    raw = os.environ.get(name)
    if raw is None or raw.strip() == "":
        return None
    return _checked(key, raw.strip(), f"environment variable {name}")


def _checked(key: str, value: Any, where: str) -> Any:
    kind = _NUMERIC.get(key)
    if kind is None:
        if not isinstance(value, str) or not value:
            raise ModelError(f"{where}: {key} must be a non-empty string, got {value!r}")
        return value
    try:
        number = kind(value)
    except (TypeError, ValueError):
        number = None
    if (
        isinstance(value, bool)
        or number is None
        or not math.isfinite(number)
        or (number <= 0 if key in ("timeout_s", "concurrency") else number < 0)
    ):
        wanted = "a positive" if key in ("timeout_s", "concurrency") else "a non-negative"
        kind_name = "integer" if kind is int else "number"
        raise ModelError(f"{where}: {key} must be {wanted} {kind_name}, got {value!r}")
    return number


def _check_role(role: str, *, allow_default: bool) -> None:
    allowed = (*FALLBACKS, DEFAULT) if allow_default else tuple(FALLBACKS)
    if role not in allowed:
        raise ModelError(f"unknown model role {role!r}; roles are {', '.join(allowed)}")
