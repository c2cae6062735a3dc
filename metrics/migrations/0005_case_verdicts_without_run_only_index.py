"""Drop the index Django gave CaseVerdict.run: the unique (run, case_id, criterion)
index leads with the run and answers the same lookups, so every verdict written paid
for it in vain (see runs 0012 for why the database side is a plain DROP INDEX)."""

from django.db import migrations, models
import django.db.models.deletion

NAME = "metrics_caseverdict_run_id_f58a38e6"


class Migration(migrations.Migration):
    dependencies = [
        ("metrics", "0004_run_value_columns"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.AlterField(
                    model_name="caseverdict",
                    name="run",
                    field=models.ForeignKey(
                        db_index=False,
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="verdicts",
                        to="runs.run",
                    ),
                ),
            ],
            database_operations=[
                migrations.RunSQL(
                    f'DROP INDEX IF EXISTS "{NAME}"',
                    reverse_sql=f'CREATE INDEX "{NAME}" ON "metrics_caseverdict" ("run_id")',
                ),
            ],
        ),
    ]
