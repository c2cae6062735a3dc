"""Models: one OpenAI-compatible chat client for systems, metrics, judges and optimizers.

    from oloproof.models import chat, complete, configure

    configure("system", model="gpt-4o-mini", base_url="http://localhost:8000/v1",
              price_in=0.15, price_out=0.60)
    reply = chat([{"role": "user", "content": "Hello"}])   # role="system" by default

A process that will time model calls calls `prepare()` first, so the SDK's import
is not charged to the first call.

Every call's tokens, cost and latency are recorded on the case in progress, under
its role, so a system's cost is measured and a judge's never counts as the system's.
"""

from oloproof_core.models._client import ChatReply, achat, chat, complete, llm, prepare
from oloproof_core.models._settings import (
    DEFAULT,
    FALLBACKS,
    ROLES,
    ModelError,
    ModelSettings,
    configure,
    configured_model,
    model_identity,
    reset_configuration,
    settings_for,
)

__all__ = [
    "DEFAULT",
    "FALLBACKS",
    "ROLES",
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
