"""Drop the indexes Django gave the per-case tables' foreign keys.

Each is the first column of the table's unique index, which answers the same lookups
(and the cascade on delete), so every row written paid for a third index in vain. The
database side is a plain DROP INDEX (the names are Django's, the same on SQLite and
PostgreSQL): altering the field would make SQLite copy the whole table.
"""

from django.db import migrations, models
import django.db.models.deletion

FOREIGN_KEYS = [
    ("caseresult", "run", "case_results", "runs.run"),
    ("datasetcase", "dataset", "cases", "runs.dataset"),
]
INDEXES = [
    ("runs_caseresult_run_id_3afd097b", "runs_caseresult", "run_id"),
    ("runs_datasetcase_dataset_id_1b3af080", "runs_datasetcase", "dataset_id"),
]


class Migration(migrations.Migration):
    dependencies = [
        ("runs", "0011_search_rows_deleted_only_when_indexed"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.AlterField(
                    model_name=model,
                    name=field,
                    field=models.ForeignKey(
                        db_index=False,
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name=related_name,
                        to=target,
                    ),
                )
                for model, field, related_name, target in FOREIGN_KEYS
            ],
            database_operations=[
                migrations.RunSQL(
                    f'DROP INDEX IF EXISTS "{name}"',
                    reverse_sql=f'CREATE INDEX "{name}" ON "{table}" ("{column}")',
                )
                for name, table, column in INDEXES
            ],
        ),
    ]
