"""What a run leaves behind: the release, the dataset, each case's result, the gate."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.db import models

from runs.errors import ImmutableRecordError


class System(models.Model):
    """A system under evaluation, known by the name given in `@system(name=...)`."""

    name = models.CharField(max_length=200, unique=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ("name",)

    def __str__(self) -> str:
        return self.name


class Release(models.Model):
    """A system at a version; a system declared without a version is recorded with ''."""

    system = models.ForeignKey(System, on_delete=models.CASCADE, related_name="releases")
    version = models.CharField(max_length=200, blank=True, default="")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = (
            "system__name",
            "-created_at",
        )
        constraints = (
            models.UniqueConstraint(fields=["system", "version"], name="release_unique_version"),
        )

    def __str__(self) -> str:
        return f"{self.system.name}@{self.version}" if self.version else self.system.name


class Dataset(models.Model):
    """A dataset known by the digest of its content; its cases are stored once per digest."""

    digest = models.CharField(max_length=64, unique=True)
    source = models.CharField(max_length=1000)
    n_cases = models.PositiveIntegerField()
    splits = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ("-created_at",)

    def __str__(self) -> str:
        return f"{self.source} ({self.digest[:12]})"


class DatasetCase(models.Model):
    """One row of a dataset: its id, input, expected value, split and cluster."""

    dataset = models.ForeignKey(Dataset, on_delete=models.CASCADE, related_name="cases")
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

    run = models.ForeignKey(Run, on_delete=models.CASCADE, related_name="case_results")
    case_id = models.CharField(max_length=500)
    position = models.PositiveIntegerField(default=0)
    output = models.JSONField(null=True, blank=True)
    error_type = models.CharField(max_length=200, blank=True, default="")
    error_message = models.TextField(blank=True, default="")
    error_traceback = models.TextField(blank=True, default="")
    latency_ms = models.FloatField(null=True, blank=True)
    cost_usd = models.FloatField(null=True, blank=True)
    artifacts = models.JSONField(default=dict, blank=True)
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


class RunChunk(models.Model):
    """A slice of a submitted run's cases (by dataset position) that one worker executes.

    A worker takes a chunk with a conditional update (pending, or claimed by a worker
    whose heartbeat `touched_at` went stale) and finishes it with another conditional
    update on its own claim token, so a chunk is counted done exactly once however
    often its task is delivered.
    """

    class Status(models.TextChoices):
        PENDING = "pending"
        CLAIMED = "claimed"
        DONE = "done"

    run = models.ForeignKey(Run, on_delete=models.CASCADE, related_name="chunks")
    index = models.PositiveIntegerField()
    first_position = models.PositiveIntegerField()
    size = models.PositiveIntegerField()
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.PENDING)
    claimed_by = models.CharField(max_length=200, blank=True, default="")
    attempts = models.PositiveIntegerField(default=0)
    cases_done = models.PositiveIntegerField(default=0)
    judging = models.JSONField(default=dict, blank=True)
    touched_at = models.DateTimeField()
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = (
            "run",
            "index",
        )
        constraints = (
            models.UniqueConstraint(fields=["run", "index"], name="run_chunk_unique_index"),
        )
        indexes = (
            models.Index(fields=["status", "touched_at"], name="run_chunk_status_touched"),
            models.Index(fields=["run", "status"], name="run_chunk_run_status"),
        )

    def __str__(self) -> str:
        return f"chunk {self.index} of run {self.run_id} ({self.status})"


class Gate(models.Model):
    """The policy's decision on a run: pass, fail or inconclusive, with each rule's outcome."""

    class Outcome(models.TextChoices):
        PASS = "pass"
        FAIL = "fail"
        INCONCLUSIVE = "inconclusive"

    run = models.OneToOneField(Run, on_delete=models.CASCADE, related_name="gate")
    outcome = models.CharField(max_length=20, choices=Outcome.choices)
    summary = models.TextField(blank=True, default="")
    rules = models.JSONField(default=list, blank=True)
    decided_at = models.DateTimeField()

    class Meta:
        indexes = (models.Index(fields=["outcome"], name="gate_outcome"),)

    def __str__(self) -> str:
        return f"gate of run {self.run_id}: {self.outcome}"


class ApprovalQuerySet(models.QuerySet["Approval"]):
    """Refuses bulk changes: approvals are an audit trail."""

    def update(self, **kwargs: Any) -> int:
        raise ImmutableRecordError(
            "approvals are immutable audit records and cannot be "
            "changed; record a new approval instead"
        )

    def delete(self) -> tuple[int, dict[str, int]]:
        raise ImmutableRecordError("approvals are immutable audit records and cannot be deleted")


class Approval(models.Model):
    """Who approved or rejected a gate, when, and why. Written once, never changed.

    Overriding a gate that did not pass (fail or inconclusive) needs `override`
    and a reason in `comment`.
    """

    class Decision(models.TextChoices):
        APPROVE = "approve"
        REJECT = "reject"

    gate = models.ForeignKey(Gate, on_delete=models.PROTECT, related_name="approvals")
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="approvals"
    )
    decision = models.CharField(max_length=10, choices=Decision.choices)
    override = models.BooleanField(default=False)
    comment = models.TextField(blank=True, default="")
    gate_outcome = models.CharField(max_length=20, choices=Gate.Outcome.choices)
    created_at = models.DateTimeField(auto_now_add=True)

    objects = ApprovalQuerySet.as_manager()

    class Meta:
        ordering = (
            "-created_at",
            "-id",
        )
        permissions = (("approve_gate", "Can approve or reject a release gate"),)
        indexes = (models.Index(fields=["gate", "-created_at"], name="approval_gate_created"),)

    def __str__(self) -> str:
        return f"{self.decision} of gate {self.gate_id} by {self.user_id}"

    def save(self, *args: Any, **kwargs: Any) -> None:
        if not self._state.adding:
            raise ImmutableRecordError(
                "approvals are immutable audit records and cannot be "
                "changed; record a new approval instead"
            )
        super().save(*args, **kwargs)

    def delete(self, *args: Any, **kwargs: Any) -> tuple[int, dict[str, int]]:
        raise ImmutableRecordError("approvals are immutable audit records and cannot be deleted")


class ApiToken(models.Model):
    """A personal API token; only its SHA-256 digest is stored, the token is shown once."""

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="api_tokens"
    )
    name = models.CharField(max_length=200, blank=True, default="")
    prefix = models.CharField(max_length=12)
    digest = models.CharField(max_length=64, unique=True)
    created_at = models.DateTimeField(auto_now_add=True)
    last_used_at = models.DateTimeField(null=True, blank=True)
    revoked_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ("-created_at",)

    def __str__(self) -> str:
        return f"token {self.prefix}… of {self.user_id}"


# The optimization tables live in their own module; importing them here registers them
# with the `runs` app.
from runs.optimization_models import (  # noqa: E402
    Optimization,
    OptimizationCandidate,
    OptimizationEvaluation,
    OptimizationReflection,
)

__all__ = [
    "ApiToken",
    "Approval",
    "CaseResult",
    "Dataset",
    "DatasetCase",
    "Gate",
    "Optimization",
    "OptimizationCandidate",
    "OptimizationEvaluation",
    "OptimizationReflection",
    "Release",
    "Run",
    "RunChunk",
    "System",
]
