"""The environment a system's process starts with: what it needs, and nothing else.

A system is code under test; it has no business holding the provider keys the
platform pays with (its model calls reach providers through the metering gateway,
which holds them), the credentials of the platform's own database and broker, nor any
other secret the operator's environment holds under a name no rule could foresee
(`PGPASSWORD`, `SENTRY_DSN`, `MONGODB_URI`, ...). So its environment is built from an
allow-list, never by removing names from the parent's:

- `PATH`, and the locale: `LANG`, `LANGUAGE`, `LC_*`, `TZ`;
- `HOME` and `TMPDIR` (inside a sandbox, both its private `/tmp`);
- the loader's `LD_LIBRARY_PATH` (an interpreter built against its own libraries
  needs it to start);
- the Python variables that decide how the interpreter imports and runs code
  (`PYTHON_VARIABLES`: `PYTHONPATH`, `PYTHONHASHSEED`, `PYTHONIOENCODING`, `PYTHONUTF8`, ...);
- the model client's settings for the system's role that are not secrets
  (`OLOPROOF_SYSTEM_MODEL`, `..._TIMEOUT`, and their `OLOPROOF_DEFAULT_*` fallbacks);
- the names the operator lists in `OLOPROOF_SYSTEM_ENV` (comma-separated; a name
  ending in `*` passes every name it starts), read from the parent's environment;
- what the pool passes itself (`child_env`: the gateway's `OPENAI_BASE_URL`,
  `OPENAI_API_KEY` and `OLOPROOF_SYSTEM_*` pointing at it, or a key the operator hands
  over on purpose), set last.

Proxy variables never pass (the network is the gateway's only), nor certificate paths
(the gateway is plain HTTP on loopback). `is_secret_name` still tells the names the
platform treats as secrets (they never pass unless named as above).
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Mapping

ChildEnv = Mapping[str, str] | Callable[[int], Mapping[str, str]]
"""Variables for a child: the same for every slot, or a function of the slot number."""

OPERATOR_VARIABLE = "OLOPROOF_SYSTEM_ENV"
"""The operator's list of further variables a system's process gets."""

PYTHON_VARIABLES = frozenset(
    {
        "PYTHONPATH",
        "PYTHONHOME",
        "PYTHONPLATLIBDIR",
        "PYTHONSAFEPATH",
        "PYTHONNOUSERSITE",
        "PYTHONHASHSEED",
        "PYTHONIOENCODING",
        "PYTHONUTF8",
        "PYTHONOPTIMIZE",
        "PYTHONDONTWRITEBYTECODE",
        "PYTHONWARNINGS",
        "PYTHONDEVMODE",
        "PYTHONFAULTHANDLER",
        "PYTHONUNBUFFERED",
        "PYTHONINTMAXSTRDIGITS",
        "PYTHONWARNDEFAULTENCODING",
        "PYTHONNODEBUGRANGES",
        "PYTHONMALLOC",
    }
)
"""What changes how a system's code is found, imported and run; never a secret.
Not `PYTHONPYCACHEPREFIX`: its folder is not in the sandbox (the parent's bytecode of
code the system may not see), so with it a process would compile every module it
imports; without it, it reads the bytecode beside the environment's sources."""

_ALLOWED = frozenset(
    {"PATH", "LANG", "LANGUAGE", "TZ", "HOME", "TMPDIR", "LD_LIBRARY_PATH"}
    | PYTHON_VARIABLES
    | {
        f"OLOPROOF_{layer}_{field}"
        for layer in ("SYSTEM", "DEFAULT")
        for field in ("MODEL", "TIMEOUT", "MAX_RETRIES", "CONCURRENCY", "BACKOFF")
    }
)

_SECRET_NAME = re.compile(
    r"(_API_KEY|_API_TOKEN|_ACCESS_KEY|_SECRET_KEY|_SECRET|_TOKEN|_PASSWORD|_CREDENTIALS"
    r"|_DATABASE_URL|_BROKER_URL)$"
    r"|^(DATABASE_URL|REDIS_URL|CELERY_BROKER_URL|CELERY_RESULT_BACKEND"
    r"|GOOGLE_APPLICATION_CREDENTIALS)$",
    re.IGNORECASE,
)


def is_secret_name(name: str) -> bool:
    """Whether a variable of this name is one of the platform's secrets by its name."""
    return _SECRET_NAME.search(name) is not None


def is_allowed_name(name: str, operator: str = "") -> bool:
    """Whether a variable of this name passes to a system's process: on the allow-list,
    or named by the operator (`operator`: the value of `OLOPROOF_SYSTEM_ENV`)."""
    if name in _ALLOWED or name.startswith("LC_"):
        return True
    for listed in operator.split(","):
        listed = listed.strip()
        if listed.endswith("*") and len(listed) > 1 and name.startswith(listed[:-1]):
            return True
        if listed and name == listed:
            return True
    return False


def child_environment(
    extra: Mapping[str, str] | None = None, base: Mapping[str, str] | None = None
) -> dict[str, str]:
    """The allowed variables of `base` (default: this process's environment), then
    `extra` on top."""
    source = os.environ if base is None else base
    operator = source.get(OPERATOR_VARIABLE, "")
    environment = {name: value for name, value in source.items() if is_allowed_name(name, operator)}
    environment.update(extra or {})
    return environment


def env_for_slot(child_env: ChildEnv | None, slot: int) -> Mapping[str, str]:
    if child_env is None:
        return {}
    return child_env(slot) if callable(child_env) else child_env
