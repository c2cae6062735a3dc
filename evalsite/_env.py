"""Settings from the environment (12-factor), read by helpers that fail loudly.

A malformed value stops the process at start-up with the variable's name, what
was found and what is allowed, instead of surfacing later as an odd behaviour.
"""

from __future__ import annotations

import os
from typing import Any

import dj_database_url
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


_SUPPORTED_ENGINES = ("django.db.backends.postgresql", "django.db.backends.sqlite3")


def parse_database_url(url: str, *, variable: str = "DATABASE_URL") -> dict[str, Any]:
    """`postgresql://user:password@host:port/name?option=value` or `sqlite:///path.sqlite3`.

    Parsed by dj-database-url; oloproof supports PostgreSQL and SQLite only, and says so.
    """
    try:
        database: dict[str, Any] = dict(dj_database_url.parse(url))
    except ValueError as exc:
        raise ImproperlyConfigured(
            f"{variable}: cannot read {url!r} ({exc}); write "
            "postgresql://user@host:5432/dbname or sqlite:///path/to/db.sqlite3"
        ) from None
    if database.get("ENGINE") not in _SUPPORTED_ENGINES:
        raise ImproperlyConfigured(
            f"{variable}: {url!r} names a {database.get('ENGINE')} database; oloproof runs on "
            "PostgreSQL (postgresql://...) or SQLite (sqlite:///...)"
        )
    if not database.get("NAME"):
        raise ImproperlyConfigured(f"{variable}: {url!r} names no database or file")
    return database
