"""SQLite: new case results are added to the search index by the recording that wrote
them (runs.writers.search_rows), in one statement per batch, rather than by a trigger per row,
which cost eight times the insert itself. Deleting or changing a case result still
updates its row through triggers. PostgreSQL: nothing changes.
"""

from typing import Any

from django.db import migrations

from runs.writers.search_rows import INSERT_ONE, TABLE

_TRIGGER = f"CREATE TRIGGER {TABLE}_insert AFTER INSERT ON runs_caseresult BEGIN {INSERT_ONE} END"


def trigger_drop(apps: Any, schema_editor: Any) -> None:
    if schema_editor.connection.vendor == "sqlite":
        schema_editor.execute(f"DROP TRIGGER IF EXISTS {TABLE}_insert")


def trigger_create(apps: Any, schema_editor: Any) -> None:
    if schema_editor.connection.vendor == "sqlite":
        schema_editor.execute(_TRIGGER)


class Migration(migrations.Migration):
    dependencies = [("runs", "0009_case_search")]

    operations = [migrations.RunPython(trigger_drop, trigger_create, elidable=False)]
