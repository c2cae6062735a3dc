"""People's labels of judged cases, and the review queue's random draws.

A label is one person's value for one criterion on what was judged (an input, an
output, an expected value), keyed by their digest, so it belongs to the project, not to
a run: a later run whose output is the same reuses it, one whose output changed needs
a new one. The review queue's draws are not stored: they are a pure function of the
run's dataset's label seed and the run's cases (`oloproof_core.labels.review_draws`).
"""

from __future__ import annotations

from django.conf import settings
from django.db import models

from runs.models.projects import Project


class Label(models.Model):
    """One person's value of one criterion for one judged (input, output, expected)."""

    # No index of its own: the unique (project, criterion, key, author) one leads with it.
    project = models.ForeignKey(
        Project, on_delete=models.CASCADE, related_name="labels", db_index=False
    )
    criterion = models.CharField(max_length=200)
    key = models.CharField(max_length=64)
    """`oloproof_core.labels.label_key(input, output, expected)` of what was judged."""
    value = models.FloatField()
    """On the metric's scale: 0 or 1 for pass/fail, within the score range for a score."""
    note = models.TextField(blank=True, default="")
    author = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="labels",
    )
    author_name = models.CharField(max_length=200)
    """The account's username, or who ran the command line (`alice@command-line`)."""
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ("project", "criterion", "key", "created_at")
        constraints = (
            models.UniqueConstraint(
                fields=["project", "criterion", "key", "author_name"], name="label_unique_author"
            ),
        )

    def __str__(self) -> str:
        return f"{self.author_name} on {self.criterion} {self.key[:12]}: {self.value}"
