"""Which store a run records into when the caller does not pass one.

By default every run is recorded in the local Django store (SQLite in the data
folder `OLOPROOF_DATA_DIR`, default `./.oloproof`, or the database named by
`DATABASE_URL`), so the dashboard shows it and the verdict cache outlasts the
process. `OLOPROOF_RECORD=0` keeps everything in this process's memory instead.
This module is the one place where the library reaches Django.
"""

from __future__ import annotations

import os
import threading

from oloproof_core.errors import ConfigError, OloproofError
from oloproof_core.store import InMemoryStore, Store

_process_store = InMemoryStore()
_local_store: Store | None = None
_lock = threading.Lock()

_ON = frozenset({"1", "true", "yes", "on", ""})
_OFF = frozenset({"0", "false", "no", "off"})


def recording_enabled() -> bool:
    """False when `OLOPROOF_RECORD` turns recording into the local store off."""
    raw = os.environ.get("OLOPROOF_RECORD", "1")
    value = raw.strip().lower()
    if value in _ON:
        return True
    if value in _OFF:
        return False
    raise ConfigError(
        f"OLOPROOF_RECORD={raw!r} is not understood: set 1 to record runs in the local "
        "store (the default) or 0 to keep them in this process's memory only"
    )


def default_store() -> Store:
    """The store `evaluate()` and `oloproof run` use when none is given.

    The local Django store unless `OLOPROOF_RECORD=0`; then an in-memory store
    that lives as long as this process.
    """
    if not recording_enabled():
        return _process_store
    global _local_store
    with _lock:
        if _local_store is None:
            _local_store = _open_local_store()
        return _local_store


def _open_local_store() -> Store:
    """Set Django up (if the host process has not), migrate the embedded database, connect."""
    import django
    from django.apps import apps
    from django.conf import settings

    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "evalsite.settings")
    if not apps.ready:
        django.setup()
    if not apps.is_installed("runs"):
        raise OloproofError(
            "this process configured Django without the oloproof apps ('runs', 'metrics'); "
            "pass store=... to evaluate(), or set OLOPROOF_RECORD=0"
        )
    _ensure_migrated(embedded=bool(getattr(settings, "EMBEDDED_DATABASE", False)))
    from runs.store import DjangoStore

    return DjangoStore()


def _ensure_migrated(*, embedded: bool) -> None:
    """Migrate the embedded SQLite file on first use; refuse an unmigrated server database."""
    import fcntl

    from django.conf import settings
    from django.core.management import call_command
    from django.db import DEFAULT_DB_ALIAS, connections
    from django.db.migrations.executor import MigrationExecutor

    def pending() -> bool:
        executor = MigrationExecutor(connections[DEFAULT_DB_ALIAS])
        return bool(executor.migration_plan(executor.loader.graph.leaf_nodes()))

    if not pending():
        return
    if not embedded:
        raise OloproofError(
            "the database named by DATABASE_URL has unapplied migrations: run "
            "`python manage.py migrate` once, or set OLOPROOF_RECORD=0 to run without it"
        )
    # Two processes starting at once on a fresh data folder migrate one after the other.
    lock_path = os.path.join(str(settings.DATA_DIR), "migrate.lock")
    with open(lock_path, "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            if pending():
                call_command("migrate", interactive=False, verbosity=0)
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)
