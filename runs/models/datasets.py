"""Datasets, stored once per content digest, and their rows."""

from __future__ import annotations

import os
import secrets

from django.db import models


def new_label_seed() -> str:
    """A random seed for a new dataset's review queues (128 bits, hex)."""
    return secrets.token_hex(16)


class Dataset(models.Model):
    """A dataset known by the digest of its content; its cases are stored once per digest."""

    digest = models.CharField(max_length=64, unique=True)
    unrepeated_digest = models.CharField(max_length=64, blank=True, default="", db_index=True)
    """For a dataset of repeated rows (`q7#r2`), the digest of the dataset it repeats: runs
    of one dataset at different repeat counts are compared case by case through it."""
    source = models.CharField(max_length=1000)
    n_cases = models.PositiveIntegerField()
    splits = models.JSONField(default=dict, blank=True)
    label_seed = models.CharField(max_length=64, default=new_label_seed, editable=False)
    """Fixed when the dataset is first recorded, before any run on it is judged: the
    review queue of a run's cases is a pure function of it and the run's case ids, so
    the draws are random with respect to any judge's errors, and every run on the same
    cases draws the same queue (their labels pair)."""
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ("-created_at",)

    def __str__(self) -> str:
        return f"{self.source} ({self.digest[:12]})"

    @property
    def cases_digest(self) -> str:
        """The digest of its cases before any repeats: equal for runs of one dataset at
        every repeat count."""
        return self.unrepeated_digest or self.digest

    @property
    def name(self) -> str:
        """The file the dataset was read from, without its folders; rows given in code have none."""
        if self.source.startswith("<"):
            return "rows given in code"
        return os.path.basename(self.source.rstrip("/\\")) or self.source


class DatasetCase(models.Model):
    """One row of a dataset: its id, input, expected value, split and cluster."""

    # No index of its own: the unique (dataset, case_id) one leads with it.
    dataset = models.ForeignKey(
        Dataset, on_delete=models.CASCADE, related_name="cases", db_index=False
    )
    case_id = models.CharField(max_length=500)
    position = models.PositiveIntegerField()
    input = models.JSONField()
    expected = models.JSONField(null=True, blank=True)
    split = models.CharField(max_length=200, null=True, blank=True)
    cluster = models.CharField(max_length=200, null=True, blank=True)

    class Meta:
        ordering = (
            "dataset",
            "position",
        )
        constraints = (
            models.UniqueConstraint(fields=["dataset", "case_id"], name="dataset_case_unique_id"),
        )
        indexes = (models.Index(fields=["dataset", "position"], name="dataset_case_position"),)

    def __str__(self) -> str:
        return self.case_id
