"""Each optimization candidate keeps the budget used when it was recorded, so the page can
draw the score over the budget spent."""

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("runs", "0018_run_keeping"),
    ]

    operations = [
        migrations.AddField(
            model_name="optimizationcandidate",
            name="budget_used",
            field=models.JSONField(blank=True, null=True),
        ),
    ]
