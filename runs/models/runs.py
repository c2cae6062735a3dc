"""A run of a release on a dataset, and what the system did on each case."""

from __future__ import annotations

from django.conf import settings
from django.db import models

from runs.models.datasets import Dataset
from runs.models.projects import Project
from runs.models.systems import Release


class Run(models.Model):
    """One evaluation of a release on a dataset: status, progress, config and provenance.

    A submitted run starts `queued` with only its config (import paths, dataset
    path); its release and dataset are filled in once a worker has loaded them.
    """

    class Status(models.TextChoices):
        QUEUED = "queued"
        RUNNING = "running"
        FINALISING = "finalising"
        SUCCEEDED = "succeeded"
        FAILED = "failed"

    project = models.ForeignKey(Project, on_delete=models.PROTECT, related_name="runs")
    release = models.ForeignKey(
        Release, on_delete=models.PROTECT, related_name="runs", null=True, blank=True
    )
    dataset = models.ForeignKey(
        Dataset, on_delete=models.PROTECT, related_name="runs", null=True, blank=True
    )
    status = models.CharField(max_length=20, choices=Status.choices, default=Status.QUEUED)
    split = models.CharField(max_length=200, null=True, blank=True)
    cases_total = models.PositiveIntegerField(default=0)
    cases_done = models.PositiveIntegerField(default=0)
    cases_failed = models.PositiveIntegerField(default=0)
    # The recorded cases by outcome, kept by the recording as it writes them, so a page
    # of a million-case run never counts its rows. None: not kept (rows written some
    # other way), and then counted (runs.selectors.cases.run_outcome_counts).
    outcome_passed = models.PositiveIntegerField(null=True, blank=True)
    outcome_failed = models.PositiveIntegerField(null=True, blank=True)
    outcome_missing = models.PositiveIntegerField(null=True, blank=True)
    config = models.JSONField(default=dict, blank=True)
    provenance = models.JSONField(default=dict, blank=True)
    confidence = models.FloatField(default=0.95)
    policy_digest = models.CharField(max_length=64, blank=True, default="")
    policy_text = models.TextField(blank=True, default="")
    error = models.TextField(blank=True, default="")
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="runs",
    )
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    duration_s = models.FloatField(null=True, blank=True)

    class Meta:
        ordering = (
            "-created_at",
            "-id",
        )
        indexes = (
            models.Index(fields=["release", "-created_at"], name="run_release_created"),
            models.Index(fields=["-created_at"], name="run_created"),
            models.Index(fields=["status", "-created_at"], name="run_status_created"),
        )

    def __str__(self) -> str:
        return f"run {self.pk} ({self.status})"

    @property
    def is_finished(self) -> bool:
        return self.status in (self.Status.SUCCEEDED, self.Status.FAILED)


class CaseResult(models.Model):
    """What the system did on one case of a run: output or error, latency, cost, artifacts.

    (run, case_id) is unique, so a retried or duplicated chunk of work can never
    record a case twice.
    """

    class Outcome(models.TextChoices):
        PASSED = "passed"
        FAILED = "failed"
        MISSING = "missing"
        PENDING = "pending"

    # No index of its own: the unique (run, case_id) one leads with it.
    run = models.ForeignKey(
        Run, on_delete=models.CASCADE, related_name="case_results", db_index=False
    )
    case_id = models.CharField(max_length=500)
    position = models.PositiveIntegerField(default=0)
    output = models.JSONField(null=True, blank=True)
    error_type = models.CharField(max_length=200, blank=True, default="")
    error_message = models.TextField(blank=True, default="")
    error_traceback = models.TextField(blank=True, default="")
    latency_ms = models.FloatField(null=True, blank=True)
    cost_usd = models.FloatField(null=True, blank=True)
    artifacts = models.JSONField(default=dict, blank=True)
    model_calls = models.JSONField(default=list, blank=True)
    """Every model call of the case (role, model, tokens, cost, latency), as measured."""
    outcome = models.CharField(max_length=10, choices=Outcome.choices, default=Outcome.PENDING)

    class Meta:
        ordering = (
            "run",
            "position",
        )
        constraints = (
            models.UniqueConstraint(fields=["run", "case_id"], name="case_result_unique_case"),
        )
        indexes = (
            models.Index(fields=["run", "position"], name="case_result_run_position"),
            models.Index(fields=["run", "outcome", "position"], name="case_result_run_outcome"),
        )

    def __str__(self) -> str:
        return f"{self.case_id} of run {self.run_id}"

    @property
    def has_error(self) -> bool:
        return bool(self.error_type)

    def error_dict(self) -> dict[str, str] | None:
        """The failure in the engine's shape (`CaseError.to_dict`), or None."""
        if not self.error_type:
            return None
        return {
            "type": self.error_type,
            "message": self.error_message,
            "traceback": self.error_traceback,
        }
