"""What people keep on a run beside its record: a name, tags, and whether it is hidden.

Kept in tables of their own, written by `runs.writers.run_keeping`, so a run's recorded rows
stay as the recording wrote them: hiding a debugging run or naming a good one changes
nothing the engine reported.
"""

from __future__ import annotations

from django.conf import settings
from django.db import models

from runs.models.runs import Run

MAX_RUN_NAME = 200
MAX_TAG = 50
MAX_TAGS = 20


class RunKeeping(models.Model):
    """A run's name (empty: the run is shown by its number) and when it was hidden."""

    run = models.OneToOneField(Run, on_delete=models.CASCADE, related_name="keeping")
    name = models.CharField(max_length=MAX_RUN_NAME, blank=True, default="")
    hidden_at = models.DateTimeField(null=True, blank=True)
    hidden_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    updated_at = models.DateTimeField(auto_now=True)

    def __str__(self) -> str:
        return f"keeping of run {self.run_id}"


class RunTag(models.Model):
    """One tag on a run (a run's tags are its rows here, so the history filters by tag)."""

    run = models.ForeignKey(Run, on_delete=models.CASCADE, related_name="tags")
    tag = models.CharField(max_length=MAX_TAG)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ("run", "tag")
        constraints = (models.UniqueConstraint(fields=["run", "tag"], name="run_tag_unique"),)
        indexes = (models.Index(fields=["tag", "run"], name="run_tag_by_tag"),)

    def __str__(self) -> str:
        return f"{self.tag} on run {self.run_id}"
