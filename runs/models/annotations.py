"""People's ratings and comments on a run's cases, with every change kept.

An annotation is one person's current word on one case (a pass/fail rating, a score
from 0 to 1, a comment); each save also appends a change row that is never altered,
so the trail shows who said what, when, and how it changed. Annotations sit beside the
recorded verdicts and estimates and never change them.
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.db import models

from runs.errors import ImmutableRecordError
from runs.models.runs import Run

_IMMUTABLE = "annotation changes are an audit trail: they are never changed or deleted"


class Rating(models.TextChoices):
    PASS = "pass"
    FAIL = "fail"


class CaseAnnotation(models.Model):
    """One person's current rating, score and comment on one case of a run."""

    run = models.ForeignKey(Run, on_delete=models.CASCADE, related_name="annotations")
    case_id = models.CharField(max_length=500)
    author = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="case_annotations",
    )
    author_name = models.CharField(max_length=200)
    """The account's username, or who ran the command line (`alice@command-line`)."""
    rating = models.CharField(max_length=10, choices=Rating.choices, blank=True, default="")
    score = models.FloatField(null=True, blank=True)
    comment = models.TextField(blank=True, default="")
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ("run", "case_id", "created_at")
        constraints = (
            models.UniqueConstraint(
                fields=["run", "case_id", "author_name"], name="case_annotation_unique_author"
            ),
        )
        indexes = (
            models.Index(fields=["run", "case_id"], name="case_annotation_run_case"),
            models.Index(fields=["run", "rating", "case_id"], name="case_annotation_run_rating"),
        )

    def __str__(self) -> str:
        return f"{self.author_name} on {self.case_id} of run {self.run_id}"


class AppendOnlyQuerySet(models.QuerySet[Any]):
    def update(self, **kwargs: Any) -> int:
        raise ImmutableRecordError(_IMMUTABLE)

    def delete(self) -> tuple[int, dict[str, int]]:
        raise ImmutableRecordError(_IMMUTABLE)


class CaseAnnotationChange(models.Model):
    """An annotation as one save left it: written once, never changed or deleted."""

    annotation = models.ForeignKey(CaseAnnotation, on_delete=models.CASCADE, related_name="changes")
    version = models.PositiveIntegerField()
    run = models.ForeignKey(Run, on_delete=models.CASCADE, related_name="annotation_changes")
    case_id = models.CharField(max_length=500)
    author_name = models.CharField(max_length=200)
    rating = models.CharField(max_length=10, choices=Rating.choices, blank=True, default="")
    score = models.FloatField(null=True, blank=True)
    comment = models.TextField(blank=True, default="")
    changed_at = models.DateTimeField(auto_now_add=True)

    objects = AppendOnlyQuerySet.as_manager()

    class Meta:
        ordering = ("annotation", "version")
        constraints = (
            models.UniqueConstraint(
                fields=["annotation", "version"], name="case_annotation_change_unique"
            ),
        )
        indexes = (
            models.Index(fields=["run", "case_id", "changed_at"], name="annotation_change_case"),
        )

    def __str__(self) -> str:
        return f"version {self.version} of {self.annotation_id}"

    def save(self, *args: Any, **kwargs: Any) -> None:
        if not self._state.adding:
            raise ImmutableRecordError(_IMMUTABLE)
        super().save(*args, **kwargs)

    def delete(self, *args: Any, **kwargs: Any) -> tuple[int, dict[str, int]]:
        raise ImmutableRecordError(_IMMUTABLE)
