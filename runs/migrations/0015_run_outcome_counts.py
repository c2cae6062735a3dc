"""Each run's recorded cases by outcome, kept on the run: filled here for runs recorded
before, in one pass over the case results (grouped by run and outcome, 500 runs at a
time). Nullable, so SQLite adds the columns in place rather than rebuilding runs_run
(a rebuild would break the search triggers of runs_caseresult, which name it)."""

from django.db import migrations, models
from django.db.models import Count

OUTCOMES = ("passed", "failed", "missing")
RUNS_PER_BATCH = 500


def outcome_counts_fill(apps, schema_editor):
    Run = apps.get_model("runs", "Run")
    CaseResult = apps.get_model("runs", "CaseResult")
    run_ids = list(Run.objects.order_by("id").values_list("id", flat=True))
    for start in range(0, len(run_ids), RUNS_PER_BATCH):
        batch = run_ids[start : start + RUNS_PER_BATCH]
        counts: dict[int, dict[str, int]] = {run_id: {} for run_id in batch}
        rows = (
            CaseResult.objects.filter(run_id__in=batch, outcome__in=OUTCOMES)
            .values("run_id", "outcome")
            .annotate(n=Count("id"))
            .order_by()
        )
        for row in rows:
            counts.setdefault(row["run_id"], {})[row["outcome"]] = row["n"]
        changed = []
        for run_id, by_outcome in counts.items():
            run = Run(pk=run_id)
            for outcome in OUTCOMES:
                setattr(run, f"outcome_{outcome}", by_outcome.get(outcome, 0))
            changed.append(run)
        Run.objects.bulk_update(changed, [f"outcome_{outcome}" for outcome in OUTCOMES])


class Migration(migrations.Migration):
    dependencies = [
        ("runs", "0014_labels"),
    ]

    operations = [
        migrations.AddField(
            model_name="run",
            name="outcome_passed",
            field=models.PositiveIntegerField(blank=True, null=True),
        ),
        migrations.AddField(
            model_name="run",
            name="outcome_failed",
            field=models.PositiveIntegerField(blank=True, null=True),
        ),
        migrations.AddField(
            model_name="run",
            name="outcome_missing",
            field=models.PositiveIntegerField(blank=True, null=True),
        ),
        migrations.RunPython(outcome_counts_fill, migrations.RunPython.noop, elidable=True),
    ]
