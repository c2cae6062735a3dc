"""SQLite: the search index's delete and update triggers remove a case result's row only
when the index holds it.

A contentless FTS5 table takes a 'delete' of a row it never held without complaint and
then fails every later change with "database disk image is malformed". Since 0010 the
recording adds the rows, so a case result written any other way (a restore, a hand-made
insert) is not indexed, and deleting it must leave the index alone. PostgreSQL: nothing
changes.
"""

from typing import Any

from django.db import migrations

from runs.writers.search_rows import DELETE_INDEXED, DELETE_ONE, INSERT_ONE, TABLE

_COLUMNS_CHANGED = "AFTER UPDATE OF output, error_type, error_message ON runs_caseresult"


def _triggers(delete: str) -> list[str]:
    return [
        f"DROP TRIGGER IF EXISTS {TABLE}_delete",
        f"DROP TRIGGER IF EXISTS {TABLE}_update",
        f"CREATE TRIGGER {TABLE}_delete AFTER DELETE ON runs_caseresult BEGIN {delete} END",
        f"CREATE TRIGGER {TABLE}_update {_COLUMNS_CHANGED} BEGIN {delete} {INSERT_ONE} END",
    ]


def _replace(statements: list[str]) -> Any:
    def replace(apps: Any, schema_editor: Any) -> None:
        if schema_editor.connection.vendor == "sqlite":
            for statement in statements:
                schema_editor.execute(statement)

    return replace


class Migration(migrations.Migration):
    dependencies = [("runs", "0010_search_rows_added_by_recording")]

    operations = [
        migrations.RunPython(
            _replace(_triggers(DELETE_INDEXED)), _replace(_triggers(DELETE_ONE)), elidable=False
        )
    ]
