"""Settings from the environment (12-factor), read by helpers that fail loudly.

A malformed value stops the process at start-up with the variable's name, what
was found and what is allowed, instead of surfacing later as an odd behaviour.
"""

from __future__ import annotations

import os
from typing import Any
from urllib.parse import parse_qsl, unquote, urlsplit

from django.core.exceptions import ImproperlyConfigured

_TRUE = frozenset({"1", "true", "yes", "on"})
_FALSE = frozenset({"0", "false", "no", "off", ""})


def env_str(name: str, default: str) -> str:
    return os.environ.get(name, default)


def env_secret(name: str) -> str | None:
    """`NAME` from the environment, or the contents of the file named by `NAME_FILE`.

    The `_FILE` form is how Docker and Kubernetes hand over secrets without putting
    them in the process environment.
    """
    path = os.environ.get(f"{name}_FILE")
    if path:
        try:
            with open(path, encoding="utf-8") as handle:
                value = handle.read().strip()
        except OSError as exc:
            raise ImproperlyConfigured(
                f"{name}_FILE={path!r} cannot be read: {exc.strerror}"
            ) from None
        if not value:
            raise ImproperlyConfigured(f"{name}_FILE={path!r} is empty")
        if os.environ.get(name):
            raise ImproperlyConfigured(f"set {name} or {name}_FILE, not both")
        return value
    return os.environ.get(name) or None


def env_bool(name: str, default: bool) -> bool:
    raw = os.environ.get(name)
    if raw is None:
        return default
    lowered = raw.strip().lower()
    if lowered in _TRUE:
        return True
    if lowered in _FALSE:
        return False
    raise ImproperlyConfigured(
        f"{name}={raw!r} is not a boolean; use 1/0, true/false, yes/no or on/off"
    )


def env_int(name: str, default: int) -> int:
    raw = os.environ.get(name)
    if raw is None:
        return default
    try:
        return int(raw)
    except ValueError:
        raise ImproperlyConfigured(f"{name}={raw!r} is not an integer") from None


def env_list(name: str, default: list[str]) -> list[str]:
    raw = os.environ.get(name)
    if raw is None:
        return default
    return [item.strip() for item in raw.split(",") if item.strip()]


_ENGINES = {
    "postgres": "django.db.backends.postgresql",
    "postgresql": "django.db.backends.postgresql",
    "pgsql": "django.db.backends.postgresql",
    "sqlite": "django.db.backends.sqlite3",
}


def parse_database_url(url: str, *, variable: str = "DATABASE_URL") -> dict[str, Any]:
    """`postgresql://user:password@host:port/name?option=value` or `sqlite:///path.sqlite3`."""
    parts = urlsplit(url)
    engine = _ENGINES.get(parts.scheme)
    if engine is None:
        allowed = ", ".join(f"{scheme}://" for scheme in _ENGINES)
        raise ImproperlyConfigured(
            f"{variable}: unknown scheme {parts.scheme!r} in {url!r}; allowed: {allowed}"
        )
    if engine.endswith("sqlite3"):
        # sqlite:///relative.db and sqlite:////absolute/path.db, as in most 12-factor tools.
        path = unquote(parts.path[1:] if parts.path.startswith("/") else parts.path)
        if not path:
            raise ImproperlyConfigured(
                f"{variable}: {url!r} names no file; write sqlite:///path/to/db.sqlite3"
            )
        return {"ENGINE": engine, "NAME": path}
    name = unquote(parts.path.lstrip("/"))
    if not name:
        raise ImproperlyConfigured(
            f"{variable}: {url!r} names no database; write postgresql://user@host:5432/dbname"
        )
    return {
        "ENGINE": engine,
        "NAME": name,
        "USER": unquote(parts.username or ""),
        "PASSWORD": unquote(parts.password or ""),
        "HOST": parts.hostname or "",
        "PORT": str(parts.port or ""),
        "OPTIONS": dict(parse_qsl(parts.query)),
    }
