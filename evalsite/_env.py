"""Settings from the environment (12-factor), read by helpers that fail loudly.

A malformed value stops the process at start-up with the variable's name, what
was found and what is allowed, instead of surfacing later as an odd behaviour.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import dj_database_url
from django.core.exceptions import ImproperlyConfigured

_TRUE = frozenset({"1", "true", "yes", "on"})
_FALSE = frozenset({"0", "false", "no", "off", ""})

SETTINGS = "evalsite/settings.py"


@dataclass(frozen=True, slots=True)
class Variable:
    """One environment variable a platform process reads."""

    name: str
    needed_by: frozenset[str] = frozenset()
    """The processes ("web", "worker") that must have it set in production: left unset
    they would start, but on a private SQLite file, a private queue, a key of their own or
    refusing every host name."""
    file_form: bool = False
    """May be given as `NAME_FILE`, the path of a file holding the value (`env_secret`)."""
    reader: str = SETTINGS
    """Where it is read, when not by the settings through the helpers below."""


_BOTH = frozenset({"web", "worker"})
_WEB = frozenset({"web"})

VARIABLES: Mapping[str, Variable] = {
    variable.name: variable
    for variable in (
        Variable("DJANGO_SECRET_KEY", needed_by=_WEB, file_form=True),
        Variable("DJANGO_DEBUG"),
        Variable("DJANGO_ALLOWED_HOSTS", needed_by=_WEB),
        Variable("DJANGO_CSRF_TRUSTED_ORIGINS"),
        Variable("DJANGO_SECURE_COOKIES", needed_by=_WEB),
        Variable("DJANGO_BEHIND_PROXY"),
        Variable("DJANGO_SSL_REDIRECT", needed_by=_WEB),
        Variable("DJANGO_HSTS_SECONDS"),
        Variable("DJANGO_HSTS_INCLUDE_SUBDOMAINS"),
        Variable("DJANGO_HSTS_PRELOAD"),
        Variable("DATABASE_URL", needed_by=_BOTH, file_form=True),
        Variable("DATABASE_CONN_MAX_AGE"),
        Variable("CELERY_BROKER_URL", needed_by=_BOTH),
        Variable("CELERY_VISIBILITY_TIMEOUT"),
        Variable("CELERY_RESULT_BACKEND"),
        Variable("CELERY_TASK_ALWAYS_EAGER"),
        Variable("TZ"),
        Variable("OLOPROOF_DATA_DIR", reader="evalsite/project.py"),
        Variable("OLOPROOF_STATIC_ROOT"),
        Variable("OLOPROOF_SQLITE_TIMEOUT"),
        Variable("OLOPROOF_LOGIN_LOCKOUT"),
        Variable("OLOPROOF_LOGIN_FAILURES"),
        Variable("OLOPROOF_LOGIN_LOCKOUT_MINUTES"),
        Variable("OLOPROOF_TOKEN_DAYS"),
        Variable("OLOPROOF_TOKEN_FAILURES"),
        Variable("OLOPROOF_TOKEN_FAILURE_WINDOW"),
        Variable("OLOPROOF_CHUNK_SIZE"),
        Variable("OLOPROOF_CHUNK_STALE_AFTER"),
        Variable("OLOPROOF_SWEEP_INTERVAL"),
        Variable("OLOPROOF_RECORD_CHUNK_SIZE"),
        Variable("OLOPROOF_MAX_CASES"),
        Variable("OLOPROOF_LOG_LEVEL"),
        Variable("OLOPROOF_SERVER_TIMING"),
        Variable("OLOPROOF_DASHBOARD_URL", reader="runs/store/data_folder.py"),
        Variable("OLOPROOF_SANDBOX", reader="oloproof_core/execution/isolation/_sandbox_choice.py"),
        Variable("OLOPROOF_PROBE_TIMEOUT_S", reader="oloproof_core/configs/code/_probe.py"),
        Variable("OLOPROOF_DSPY_IN_PROCESS", reader="runs/workers/optimization_work.py"),
        Variable("OLOPROOF_SANDBOX_TMP_MB", reader="oloproof_core/execution/isolation/_caps.py"),
        Variable("OLOPROOF_SANDBOX_PROCESSES", reader="oloproof_core/execution/isolation/_caps.py"),
        Variable("OLOPROOF_SANDBOX_OUTPUT_MB", reader="oloproof_core/execution/isolation/_caps.py"),
        Variable(
            "OLOPROOF_SANDBOX_SCAN_LIMIT", reader="oloproof_core/execution/isolation/_caps.py"
        ),
        Variable("OLOPROOF_SYSTEM_ENV", reader="oloproof_core/execution/isolation/_env.py"),
        Variable("OLOPROOF_JUDGE_CONCURRENCY", reader="oloproof_core/judging/judge.py"),
        Variable("OLOPROOF_RECORD", reader="oloproof/_store.py"),
    )
}
"""Every variable a deployment may set, but for the models' `OLOPROOF_<ROLE>_<FIELD>`
(docs/models.md). The settings read theirs only through the helpers below, which refuse
a name missing here, so this table, `.env.example` and docker-compose.yml are checked
against one another (tests/deploy/test_compose_matches_code.py)."""


def _declared(name: str, *, file_form: bool = False) -> str:
    """`name`, once it is known to be declared (with its `_FILE` form, if that is read)."""
    variable = VARIABLES.get(name)
    if variable is None or (file_form and not variable.file_form):
        form = f"{name} with its {name}_FILE form" if file_form else name
        raise LookupError(f"the settings read {form}, not declared in evalsite._env.VARIABLES")
    return name


def env_str(name: str, default: str) -> str:
    return os.environ.get(_declared(name), default)


def env_secret(name: str) -> str | None:
    """`NAME` from the environment, or the contents of the file named by `NAME_FILE`.

    The `_FILE` form is how Docker and Kubernetes hand over secrets without putting
    them in the process environment.
    """
    path = os.environ.get(f"{_declared(name, file_form=True)}_FILE")
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
    raw = os.environ.get(_declared(name))
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
    raw = os.environ.get(_declared(name))
    if raw is None:
        return default
    try:
        return int(raw)
    except ValueError:
        raise ImproperlyConfigured(f"{name}={raw!r} is not an integer") from None


def env_list(name: str, default: list[str]) -> list[str]:
    raw = os.environ.get(_declared(name))
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
