"""Bringing up Django for the commands that talk to the platform (worker, serve, submit)."""

from __future__ import annotations


def django_ready(*, migrate: bool = False) -> None:
    """Set Django up and make sure the database is migrated.

    The embedded SQLite file is always migrated on first use. A server database
    (DATABASE_URL) is migrated only when `migrate` is set (`oloproof serve`); other
    commands refuse to run on an unmigrated one and say how to migrate it.
    """
    from oloproof._platform import django_setup

    django_setup()
    from oloproof_core import OloproofError
    from runs.errors import DomainError
    from runs.store.database import database_ready

    try:
        database_ready(migrate_server=migrate)
    except DomainError as exc:
        raise OloproofError(str(exc)) from None
