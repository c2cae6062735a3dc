"""The environment a system's process starts with: the parent's, minus its secrets.

A system is code under test; it has no business holding the provider keys the
platform pays with (model calls will reach providers through the metering gateway,
which holds them) nor the credentials of the platform's own database and broker.
The rule, applied to variable names case-insensitively:

- names ending in `_API_KEY`, `_API_TOKEN`, `_ACCESS_KEY`, `_SECRET_KEY`, `_SECRET`,
  `_TOKEN`, `_PASSWORD` or `_CREDENTIALS` (OPENAI_API_KEY, ANTHROPIC_API_KEY,
  OLOPROOF_SYSTEM_API_KEY, AWS_SECRET_ACCESS_KEY, HF_TOKEN, ...);
- the connection strings DATABASE_URL, REDIS_URL, CELERY_BROKER_URL,
  CELERY_RESULT_BACKEND and any name ending in `_DATABASE_URL` or `_BROKER_URL`;
- GOOGLE_APPLICATION_CREDENTIALS (a path to a key file).

Variables the operator passes explicitly (`child_env`) are set after the removal,
so a key can still be handed to a system on purpose.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Mapping

ChildEnv = Mapping[str, str] | Callable[[int], Mapping[str, str]]
"""Variables for a child: the same for every slot, or a function of the slot number."""

_SECRET_NAME = re.compile(
    r"(_API_KEY|_API_TOKEN|_ACCESS_KEY|_SECRET_KEY|_SECRET|_TOKEN|_PASSWORD|_CREDENTIALS"
    r"|_DATABASE_URL|_BROKER_URL)$"
    r"|^(DATABASE_URL|REDIS_URL|CELERY_BROKER_URL|CELERY_RESULT_BACKEND"
    r"|GOOGLE_APPLICATION_CREDENTIALS)$",
    re.IGNORECASE,
)


def is_secret_name(name: str) -> bool:
    """Whether a variable of this name is withheld from a system's process."""
    return _SECRET_NAME.search(name) is not None


def child_environment(
    extra: Mapping[str, str] | None = None, base: Mapping[str, str] | None = None
) -> dict[str, str]:
    """`base` (default: this process's environment) without secrets, then `extra` on top."""
    source = os.environ if base is None else base
    environment = {name: value for name, value in source.items() if not is_secret_name(name)}
    environment.update(extra or {})
    return environment


def env_for_slot(child_env: ChildEnv | None, slot: int) -> Mapping[str, str]:
    if child_env is None:
        return {}
    return child_env(slot) if callable(child_env) else child_env
