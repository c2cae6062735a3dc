"""Calling models so their cost is measured, and choosing which model serves which role.

    from oloproof.models import chat, complete, configure

Roles: system (the system's own calls), reflection, metric (falls back to
reflection) and judge (falls back to metric, then reflection). See docs/models.md
for the environment variables.
"""

from oloproof_core.models import (
    ROLES,
    ChatReply,
    ModelError,
    ModelSettings,
    achat,
    chat,
    complete,
    configure,
    llm,
    prepare,
    reset_configuration,
    settings_for,
)

__all__ = [
    "ROLES",
    "ChatReply",
    "ModelError",
    "ModelSettings",
    "achat",
    "chat",
    "complete",
    "configure",
    "llm",
    "prepare",
    "reset_configuration",
    "settings_for",
]
