"""A worker's start: it waits for its database and its broker, saying why, before taking work.

A worker started before its servers answer (a machine booting, a container ahead of
PostgreSQL, a server restarting) says which one it cannot reach, one line per attempt,
and tries again after a wait that doubles from `FIRST_WAIT_S` up to `MAX_WAIT_S`, for as
long as it takes: never a traceback for the database, and no giving up after Celery's
own attempts for the broker. A database whose migrations are not applied yet (the web
process applies them when it starts) is waited for the same way. Once the worker runs,
a lost broker is Celery's to reconnect (`CELERY_BROKER_CONNECTION_MAX_RETRIES`), and a
lost database fails the chunk in hand, which is handed back and retried (`runs.workers.chunks`).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator

from django.conf import settings
from django.db import DEFAULT_DB_ALIAS, DatabaseError, connections
from kombu.exceptions import OperationalError as BrokerError

from runs.errors import DomainError
from runs.store.database import database_ready
from runs.workers.dispatch import celery_app

FIRST_WAIT_S = 1.0
MAX_WAIT_S = 30.0

Say = Callable[[str], None]


def waits(first: float = FIRST_WAIT_S, longest: float = MAX_WAIT_S) -> Iterator[float]:
    """Seconds to wait before each next attempt: doubling, then `longest` for ever."""
    wait = first
    while True:
        yield wait
        wait = min(wait * 2, longest)


def services_wait(
    *, say: Say, warn: bool = True, sleep: Callable[[float], None] = time.sleep
) -> None:
    """Return once the database (migrated) and the broker answer; until then, say why not.

    `warn`: also say when one of them is shared and the other private to this machine
    (not for the worker `oloproof serve` starts beside itself, on its own machine).
    """
    for warning in configuration_warnings() if warn else []:
        say(f"warning: {warning}")
    _until(database_problem, say=say, sleep=sleep)
    _until(broker_problem, say=say, sleep=sleep)


def _until(problem: Callable[[], str | None], *, say: Say, sleep: Callable[[float], None]) -> None:
    for attempt, wait in enumerate(waits(), start=1):
        found = problem()
        if found is None:
            return
        say(f"{found}; retrying in {wait:g} s (attempt {attempt})")
        sleep(wait)


def database_address() -> str:
    """host:port/name of the server database, or the embedded SQLite file's path."""
    database = settings.DATABASES[DEFAULT_DB_ALIAS]
    if database["ENGINE"].endswith("sqlite3"):
        return str(database["NAME"])
    host = database.get("HOST") or "localhost"
    port = database.get("PORT") or 5432
    return f"{host}:{port}/{database['NAME']}"


def database_problem() -> str | None:
    """Why the database cannot take this worker's work yet, or None when it can."""
    where = database_address()
    connection = connections[DEFAULT_DB_ALIAS]
    try:
        connection.ensure_connection()
    except DatabaseError as exc:
        connection.close()
        return f"cannot reach the database at {where} ({failure_reason(exc)})"
    try:
        database_ready()
    except DatabaseError as exc:
        # Lost since it answered, or (the embedded file) a migration that failed.
        connection.close()
        return f"cannot use the database at {where} ({failure_reason(exc)})"
    except DomainError:
        # The only refusal database_ready makes: a server database not yet migrated.
        return (
            f"the database at {where} has unapplied migrations (the web process, "
            "`oloproof serve`, applies them when it starts; or run `python manage.py migrate`)"
        )
    return None


def broker_address(info: dict[str, object]) -> str:
    port = f":{info['port']}" if info.get("port") else ""
    return f"{info['transport']}://{info['hostname']}{port}/{info.get('virtual_host') or ''}"


def broker_problem() -> str | None:
    """Why the broker cannot be reached, or None when it answers."""
    with celery_app().connection_for_read() as connection:
        try:
            # No retry here: the waits between attempts are ours, one line each.
            connection.ensure_connection(max_retries=0)
        except (BrokerError, OSError, *connection.connection_errors) as exc:
            where = broker_address(connection.info())
            return f"cannot reach the broker at {where} ({failure_reason(exc)})"
    return None


def configuration_warnings() -> list[str]:
    """A database and a broker of which one is shared and the other private to this machine.

    Such a worker takes chunks it cannot find (a private database) or waits on a queue
    the web never fills (a private queue): it would look busy and do nothing.
    """
    embedded_database = bool(getattr(settings, "EMBEDDED_DATABASE", False))
    local_queue = str(settings.CELERY_BROKER_URL).startswith("filesystem://")
    if embedded_database and not local_queue:
        return [
            f"DATABASE_URL is not set, so this worker records into {database_address()}, "
            "which only processes on this machine reach, while it takes chunks from a broker "
            "other machines may share: on another machine than the web, set DATABASE_URL to "
            "the web's database"
        ]
    if local_queue and not embedded_database:
        return [
            "CELERY_BROKER_URL is not set, so this worker takes chunks from the file-system "
            f"queue in {settings.DATA_DIR}, which only processes on this machine reach: on "
            "another machine than the web, set CELERY_BROKER_URL to the web's broker"
        ]
    return []


def failure_reason(exc: BaseException) -> str:
    """The cause in a few words: a driver's first line, without its restatement of the address."""
    lines = str(exc).strip().splitlines()
    text = " ".join(lines[0].split()) if lines else ""
    if "failed: " in text:
        # psycopg: 'connection failed: connection to server at "h", port p failed: <cause>'
        text = text.rsplit("failed: ", 1)[1]
    return text or type(exc).__name__
