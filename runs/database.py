"""Making sure the database a process is about to use has every migration applied.

The embedded SQLite file is migrated on first use, under a file lock, since a
command and the worker it starts may both get there first. A server database
(`DATABASE_URL`) is migrated only when asked (`oloproof serve`, `manage.py
migrate`); other commands refuse an unmigrated one and say how to migrate it.
"""

from __future__ import annotations

import fcntl
import os

from django.conf import settings
from django.core.management import call_command
from django.db import DEFAULT_DB_ALIAS, connections
from django.db.migrations.executor import MigrationExecutor

from runs.errors import InvalidRequestError


def _pending() -> bool:
    executor = MigrationExecutor(connections[DEFAULT_DB_ALIAS])
    return bool(executor.migration_plan(executor.loader.graph.leaf_nodes()))


def database_ready(*, migrate_server: bool = False) -> None:
    """Apply pending migrations to the embedded file (or, if asked, to the server database)."""
    embedded = bool(getattr(settings, "EMBEDDED_DATABASE", False))
    if not embedded:
        if migrate_server:
            call_command("migrate", interactive=False, verbosity=0)
        elif _pending():
            raise InvalidRequestError(
                "the database named by DATABASE_URL has unapplied migrations: run "
                "`python manage.py migrate` once (or `oloproof serve`, which migrates it), "
                "or set OLOPROOF_RECORD=0 to run without recording"
            )
        return
    if not _pending():
        return
    lock_path = os.path.join(str(settings.DATA_DIR), "migrate.lock")
    with open(lock_path, "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            if _pending():
                call_command("migrate", interactive=False, verbosity=0)
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)
