"""The review queue's draws are computed on read from the run's dataset's label seed.

Each dataset gets a seed of its own: the seed of the oldest review sample made on it
where there is one (the queue people worked from is drawn again, draw for draw, for
that sample's cases; every label keeps counting wherever it falls), a new random one
otherwise. The samples and their stored draws then go.
"""

from django.db import migrations, models

import runs.models.datasets


def seeds_give(apps, schema_editor):
    Dataset = apps.get_model("runs", "Dataset")
    ReviewSample = apps.get_model("runs", "ReviewSample")
    kept: dict[int, str] = {}
    for dataset_id, seed in ReviewSample.objects.order_by("-created_at", "-id").values_list(
        "dataset_id", "seed"
    ):
        kept[dataset_id] = seed  # the oldest sample's comes last and stays
    for dataset_id in Dataset.objects.values_list("pk", flat=True).iterator():
        seed = kept.get(dataset_id) or runs.models.datasets.new_label_seed()
        Dataset.objects.filter(pk=dataset_id).update(label_seed=seed)


class Migration(migrations.Migration):
    dependencies = [
        ("runs", "0015_run_outcome_counts"),
    ]

    operations = [
        migrations.AddField(
            model_name="dataset",
            name="label_seed",
            field=models.CharField(
                default=runs.models.datasets.new_label_seed, editable=False, max_length=64
            ),
        ),
        migrations.RunPython(seeds_give, migrations.RunPython.noop),
        migrations.DeleteModel(
            name="ReviewDraw",
        ),
        migrations.DeleteModel(
            name="ReviewSample",
        ),
    ]
