"""Making sure the database a process is about to use has every migration applied.

The embedded SQLite file is migrated on first use, under a file lock, since a
command and the worker it starts may both get there first. A server database
(`DATABASE_URL`) is migrated only when asked (`oloproof serve`, `manage.py
migrate`); other commands refuse an unmigrated one and say how to migrate it.
"""

from __future__ import annotations

import fcntl
import importlib.util
import os
from pathlib import Path

from django.apps import apps
from django.conf import settings
from django.db import DEFAULT_DB_ALIAS, DatabaseError, connections, transaction

from runs.errors import InvalidRequestError


def migration_files() -> list[tuple[str, Path]]:
    """Every (app label, migration file) the installed apps ship, read from their folders."""
    found: list[tuple[str, Path]] = []
    modules = getattr(settings, "MIGRATION_MODULES", {})
    for config in apps.get_app_configs():
        module = modules.get(config.label, f"{config.name}.migrations")
        if module is None:
            continue
        try:
            spec = importlib.util.find_spec(module)
        except ModuleNotFoundError:
            continue
        for folder in (spec.submodule_search_locations or []) if spec else []:
            found.extend(
                (config.label, path)
                for path in Path(folder).glob("*.py")
                if not path.name.startswith(("_", "~"))
            )
    return found


def migrations_on_disk() -> set[tuple[str, str]]:
    """Every (app label, migration name) the installed apps ship."""
    return {(label, path.stem) for label, path in migration_files()}


def migrations_applied() -> set[tuple[str, str]] | None:
    """What the database's `django_migrations` table lists, or None without that table."""
    connection = connections[DEFAULT_DB_ALIAS]
    try:
        # A savepoint, so a missing table leaves no aborted transaction behind.
        with transaction.atomic(using=DEFAULT_DB_ALIAS), connection.cursor() as cursor:
            cursor.execute("SELECT app, name FROM django_migrations")
            return {(str(app), str(name)) for app, name in cursor.fetchall()}
    except DatabaseError:
        return None


def _pending() -> bool:
    """True when a migration is unapplied.

    Planning `migrate` loads every migration module and builds the graph (about a
    tenth of a second per command). One query comparing the applied names with the
    files on disk settles the usual case, a current database; a database without a
    single table is new, which the first use of every store asks about twice; anything
    else (a new migration, a squashed one) is left to Django's own planner.
    """
    applied = migrations_applied()
    if applied is not None and migrations_on_disk() <= applied:
        return False
    if applied is None and _without_tables():
        return True  # a new store: every migration is pending, no plan needed to say so
    from django.db.migrations.executor import MigrationExecutor

    executor = MigrationExecutor(connections[DEFAULT_DB_ALIAS])
    return bool(executor.migration_plan(executor.loader.graph.leaf_nodes()))


def _without_tables() -> bool:
    """True for a database that holds no table at all (an error is raised, not guessed)."""
    connection = connections[DEFAULT_DB_ALIAS]
    with connection.cursor() as cursor:
        return not connection.introspection.table_names(cursor)


def _migrate() -> None:
    from django.core.management import call_command

    call_command("migrate", interactive=False, verbosity=0)


def database_ready(*, migrate_server: bool = False) -> None:
    """Apply pending migrations to the embedded file (or, if asked, to the server database)."""
    embedded = bool(getattr(settings, "EMBEDDED_DATABASE", False))
    if not embedded:
        if migrate_server:
            _migrate()
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
                _migrate_embedded()
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def _migrate_embedded() -> None:
    """A new store is copied from the template of these migrations (the first new store
    migrated makes it); one migrated before is migrated forward (`runs.store.schema_template`)."""
    from runs.store.schema_template import store_from_template, template_keep, template_path

    database = str(settings.DATABASES[DEFAULT_DB_ALIAS]["NAME"])
    template = template_path(migration_files())
    new = migrations_applied() is None
    if new and store_from_template(database, template) and not _pending():
        return
    _migrate()
    if new:
        template_keep(database, template)
