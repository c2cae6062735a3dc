"""The store's schema check: a fresh store is migrated, a current one costs one query."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from django.db.migrations.loader import MigrationLoader

from runs.store.database import migrations_applied, migrations_on_disk
from tests.support.embedded import embedded_store_env

OPEN_STORE = (
    "import json, sys\n"
    "from oloproof._store import default_store\n"
    "default_store()\n"
    "print(json.dumps({'planned': 'django.db.migrations.executor' in sys.modules}))\n"
)


def open_store(data_dir: Path) -> dict[str, bool]:
    """Open the default store in a fresh process on `data_dir`'s embedded database."""
    done = subprocess.run(
        [sys.executable, "-c", OPEN_STORE],
        env=embedded_store_env(data_dir),
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_a_fresh_store_is_migrated_and_a_current_one_is_not_planned_again(tmp_path) -> None:
    first = open_store(tmp_path)
    with sqlite3.connect(tmp_path / "oloproof.sqlite3") as database:
        applied = {
            tuple(row) for row in database.execute("SELECT app, name FROM django_migrations")
        }
    assert first["planned"]
    assert ("runs", "0001_initial") in applied

    second = open_store(tmp_path)

    assert not second["planned"]


def test_a_store_missing_one_migration_is_noticed(tmp_path) -> None:
    open_store(tmp_path)
    with sqlite3.connect(tmp_path / "oloproof.sqlite3") as database:
        # Pretend the newest sessions migration never ran: the check must plan again.
        (latest,) = database.execute(
            "SELECT name FROM django_migrations WHERE app = 'sessions' ORDER BY name DESC"
        ).fetchone()
        database.execute(
            "DELETE FROM django_migrations WHERE app = 'sessions' AND name = ?", (latest,)
        )
        database.execute("DROP TABLE django_session")

    again = open_store(tmp_path)

    assert again["planned"]
    with sqlite3.connect(tmp_path / "oloproof.sqlite3") as database:
        names = [row[0] for row in database.execute("SELECT name FROM sqlite_master")]
    assert "django_session" in names


@pytest.mark.django_db
def test_the_files_read_for_the_check_are_the_migrations_django_loads() -> None:
    loader = MigrationLoader(None, ignore_no_migrations=True)

    assert migrations_on_disk() == set(loader.disk_migrations)
    applied = migrations_applied()
    assert applied is not None
    assert migrations_on_disk() <= applied


def test_the_recording_apps_migrate_on_their_own() -> None:
    """The store's process sets Django up with the recording's apps only
    (`evalsite.store_settings`) and migrates a fresh store with them: no migration of
    theirs may depend on an app left out."""
    from evalsite.store_settings import RECORDING_APPS

    labels = {name.rsplit(".", 1)[-1] for name in RECORDING_APPS}
    graph = MigrationLoader(None, ignore_no_migrations=True).graph
    needed = {
        dependency
        for node in graph.leaf_nodes()
        if node[0] in labels
        for dependency in graph.forwards_plan(node)
    }
    assert {app for app, _ in needed} <= labels
