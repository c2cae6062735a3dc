"""People's labels of judged cases, and the review queue's random draws.

A label is one person's value for one criterion on what was judged (an input, an
output, an expected value), keyed by their digest, so it belongs to the project, not to
a run: a later run whose output is the same reuses it, one whose output changed needs
a new one. A review sample fixes, once per case set of a dataset, each case's drawing
probability and a seed; its draws are recorded as the queue grows, so every figure
built on labels can say which random draws it used and with what probability.
"""

from __future__ import annotations

import json
import struct

from django.conf import settings
from django.db import models
from django.db.models import Q

from runs.models.datasets import Dataset
from runs.models.projects import Project
from runs.models.runs import Run


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


class ReviewSample(models.Model):
    """The review queue of one case set of a dataset and one criterion, in a project.

    `case_ids` (sorted) and `probabilities` are the distribution every draw comes
    from: kept here, so more draws follow the same distribution whichever run asks.
    """

    # No index of its own: the unique constraints lead with it.
    project = models.ForeignKey(
        Project, on_delete=models.CASCADE, related_name="review_samples", db_index=False
    )
    dataset = models.ForeignKey(Dataset, on_delete=models.CASCADE, related_name="review_samples")
    split = models.CharField(max_length=200, null=True, blank=True)
    criterion = models.CharField(max_length=200)
    case_set = models.CharField(max_length=64)
    """The sha256 of the sorted case ids, one per line."""
    seed = models.CharField(max_length=64)
    case_ids = models.TextField()
    """JSON list of the case ids, sorted: the order of `probabilities`."""
    probabilities = models.BinaryField()
    """Little-endian float64, one drawing probability per case of `case_ids`."""
    created_from = models.ForeignKey(
        Run, on_delete=models.SET_NULL, null=True, blank=True, related_name="review_samples"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ("project", "-created_at")
        # Two constraints because NULLs are distinct in a unique index: a dataset read
        # whole (no split) must still have one sample per case set and criterion.
        constraints = (
            models.UniqueConstraint(
                fields=["project", "dataset", "split", "criterion", "case_set"],
                condition=Q(split__isnull=False),
                name="review_sample_unique_split",
            ),
            models.UniqueConstraint(
                fields=["project", "dataset", "criterion", "case_set"],
                condition=Q(split__isnull=True),
                name="review_sample_unique_whole",
            ),
        )

    def __str__(self) -> str:
        return f"review sample of {self.criterion} on dataset {self.dataset_id}"

    def distribution(self) -> tuple[list[str], list[float]]:
        """The case ids and their drawing probabilities, in the same (sorted) order."""
        ids = json.loads(self.case_ids)
        packed = bytes(self.probabilities)
        return ids, list(struct.unpack(f"<{len(ids)}d", packed))


class ReviewDraw(models.Model):
    """The queue's draw at `position`: the case it picked and that case's probability."""

    # No index of its own: the unique (sample, position) one leads with it and is the
    # index the queue reads its draws in order by.
    sample = models.ForeignKey(
        ReviewSample, on_delete=models.CASCADE, related_name="draws", db_index=False
    )
    position = models.PositiveIntegerField()
    case_id = models.CharField(max_length=500)
    probability = models.FloatField()

    class Meta:
        ordering = ("sample", "position")
        constraints = (
            models.UniqueConstraint(
                fields=["sample", "position"], name="review_draw_unique_position"
            ),
        )

    def __str__(self) -> str:
        return f"draw {self.position} of sample {self.sample_id}: {self.case_id}"
