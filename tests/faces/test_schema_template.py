"""A new embedded store copied from the schema template is the store migrating would
have made; the template is named by the migrations it was made with."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from tests.faces.conftest import clean_env, oloproof, write_project


def _schema(database: Path) -> tuple[list[tuple[str, str]], list[tuple[str, str]]]:
    with sqlite3.connect(database) as connection:
        tables = connection.execute(
            "SELECT name, sql FROM sqlite_master WHERE sql IS NOT NULL ORDER BY name"
        ).fetchall()
        applied = connection.execute(
            "SELECT app, name FROM django_migrations ORDER BY app, name"
        ).fetchall()
    return tables, applied


def test_a_new_store_from_the_template_is_the_migrated_store(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    env = {**clean_env(), "XDG_CACHE_HOME": str(cache)}
    first, second = tmp_path / "first", tmp_path / "second"
    for folder in (first, second):
        write_project(folder)

    made = oloproof("run", "oloproof.yaml", cwd=first, env=env)
    assert made.returncode == 0, made.stderr
    (template,) = (cache / "oloproof" / "schemas").glob("*.sqlite3")
    copied = oloproof("run", "oloproof.yaml", cwd=second, env=env)
    assert copied.returncode == 0, copied.stderr
    assert "recorded run #1" in copied.stderr

    migrated_schema = _schema(first / ".oloproof" / "oloproof.sqlite3")
    assert _schema(second / ".oloproof" / "oloproof.sqlite3") == migrated_schema
    assert _schema(template) == migrated_schema
    with sqlite3.connect(template) as connection:  # no run of the first store's in it
        assert connection.execute("SELECT COUNT(*) FROM runs_run").fetchone() == (0,)


def test_the_template_is_named_by_the_migrations_it_was_made_with(tmp_path: Path) -> None:
    from runs.store.schema_template import template_path

    migration = tmp_path / "0001_initial.py"
    migration.write_text("operations = []\n", encoding="utf-8")
    before = template_path([("runs", migration)])
    migration.write_text("operations = ['changed']\n", encoding="utf-8")

    assert template_path([("runs", migration)]) != before
