"""Models: one OpenAI-compatible chat client for systems, metrics, judges and optimizers.

    from oloproof.models import chat, complete, configure

    configure("system", model="gpt-4o-mini", base_url="http://localhost:8000/v1",
              price_in=0.15, price_out=0.60)
    reply = chat([{"role": "user", "content": "Hello"}])   # role="system" by default

A process that will time model calls calls `prepare()` first, so the HTTP client's
import is not charged to the first call.

Every call's tokens, cost and latency are recorded on the case in progress, under
its role, so a system's cost is measured and a judge's never counts as the system's.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from oloproof_core._util.names_on_first_use import names_on_first_use

if TYPE_CHECKING:
    from oloproof_core.models._client import ChatReply, achat, chat, complete, llm, prepare
    from oloproof_core.models._settings import (
        DEFAULT,
        FALLBACKS,
        ROLES,
        SIMULATED_USER,
        ModelError,
        ModelSettings,
        configure,
        configured_model,
        model_identity,
        reset_configuration,
        settings_for,
    )

# Loaded on first use: the gateway needs only the roles and settings, and a run whose
# systems and evaluators call no model never loads the client (asyncio, sockets, TLS).
_EXPORTS: dict[str, str] = {
    **dict.fromkeys(["ChatReply", "achat", "chat", "complete", "llm", "prepare"], "._client"),
    **dict.fromkeys(
        [
            "DEFAULT",
            "FALLBACKS",
            "ROLES",
            "SIMULATED_USER",
            "ModelError",
            "ModelSettings",
            "configure",
            "configured_model",
            "model_identity",
            "reset_configuration",
            "settings_for",
        ],
        "._settings",
    ),
}

__all__ = [
    "DEFAULT",
    "FALLBACKS",
    "ROLES",
    "SIMULATED_USER",
    "ChatReply",
    "ModelError",
    "ModelSettings",
    "achat",
    "chat",
    "complete",
    "configure",
    "configured_model",
    "llm",
    "model_identity",
    "prepare",
    "reset_configuration",
    "settings_for",
]

__getattr__ = names_on_first_use(__name__, _EXPORTS, globals())
