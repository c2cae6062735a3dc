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


def open_store(data_dir: Path, cache: Path | None = None) -> dict[str, bool]:
    """Open the default store in a fresh process on `data_dir`'s embedded database;
    `cache`: the user's cache folder, where the schema template is kept."""
    env = embedded_store_env(data_dir)
    if cache is not None:
        env["XDG_CACHE_HOME"] = str(cache)
    done = subprocess.run(
        [sys.executable, "-c", OPEN_STORE],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


def _applied(database: Path) -> set[tuple[str, str]]:
    with sqlite3.connect(database) as connection:
        return {
            (str(app), str(name))
            for app, name in connection.execute("SELECT app, name FROM django_migrations")
        }


def test_a_fresh_store_is_migrated_and_a_current_one_is_not_planned_again(tmp_path) -> None:
    cache = tmp_path / "cache"
    first = open_store(tmp_path / "store", cache)

    assert first["planned"]  # no template yet: migrated one migration after another
    assert ("runs", "0001_initial") in _applied(tmp_path / "store" / "oloproof.sqlite3")
    assert not open_store(tmp_path / "store", cache)["planned"]


def test_a_new_store_copied_from_the_template_plans_no_migration(tmp_path) -> None:
    cache = tmp_path / "cache"
    open_store(tmp_path / "first", cache)  # migrates, and keeps the template

    copied = open_store(tmp_path / "second", cache)

    assert not copied["planned"]
    migrated = _applied(tmp_path / "first" / "oloproof.sqlite3")
    assert _applied(tmp_path / "second" / "oloproof.sqlite3") == migrated
    assert migrations_on_disk() <= migrated


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
