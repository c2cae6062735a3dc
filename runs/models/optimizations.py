"""What an optimization leaves behind: its record, its candidates, evaluations, reflections.

An optimization is a family of runs: each candidate's val evaluation and the two
test runs are ordinary runs of ordinary releases (`<system>@<base>+opt<id>.<n>`);
these tables hold what ties them together and what a killed worker resumes from.
Imported by `runs.models`, so Django knows them as models of the `runs` app.
"""

from __future__ import annotations

from django.conf import settings
from django.db import models


class Optimization(models.Model):
    """One optimization: its config, engine, status, progress, budget used and outcome.

    A worker takes it with a conditional update (queued, or running with a stale
    heartbeat) and keeps `touched_at` fresh while it searches.
    """

    class Status(models.TextChoices):
        QUEUED = "queued"
        RUNNING = "running"
        PROVING = "proving"
        SUCCEEDED = "succeeded"
        FAILED = "failed"

    project = models.ForeignKey(
        "runs.Project", on_delete=models.PROTECT, related_name="optimizations"
    )
    system_name = models.CharField(max_length=200, blank=True, default="")
    engine = models.CharField(max_length=40, blank=True, default="")
    status = models.CharField(max_length=20, choices=Status.choices, default=Status.QUEUED)
    config = models.JSONField(default=dict, blank=True)
    progress = models.JSONField(default=dict, blank=True)
    outcome = models.JSONField(default=dict, blank=True)
    error = models.TextField(blank=True, default="")
    winner_index = models.IntegerField(null=True, blank=True)
    seed_test_run = models.ForeignKey(
        "runs.Run", on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    winner_test_run = models.ForeignKey(
        "runs.Run", on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    attempts = models.PositiveIntegerField(default=0)
    claimed_by = models.CharField(max_length=200, blank=True, default="")
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="optimizations",
    )
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    touched_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ("-created_at", "-id")
        indexes = (models.Index(fields=["status", "touched_at"], name="optimization_status"),)

    def __str__(self) -> str:
        return f"optimization {self.pk} ({self.status})"

    @property
    def is_finished(self) -> bool:
        return self.status in (self.Status.SUCCEEDED, self.Status.FAILED)


class OptimizationCandidate(models.Model):
    """A candidate as a release: texts, parents, the reflection that wrote it, val figures."""

    optimization = models.ForeignKey(
        Optimization, on_delete=models.CASCADE, related_name="candidates"
    )
    index = models.PositiveIntegerField()
    digest = models.CharField(max_length=64)
    version = models.CharField(max_length=200)
    texts = models.JSONField(default=dict)
    parents = models.JSONField(default=list, blank=True)
    origin = models.CharField(max_length=20)
    val = models.JSONField(default=dict, blank=True)
    cost_usd = models.FloatField(null=True, blank=True)
    latency_ms = models.FloatField(null=True, blank=True)
    reflection = models.JSONField(null=True, blank=True)
    val_run = models.ForeignKey(
        "runs.Run", on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    budget_used = models.JSONField(null=True, blank=True)

    class Meta:
        ordering = ("optimization", "index")
        constraints = (
            models.UniqueConstraint(
                fields=["optimization", "index"], name="optimization_candidate_unique"
            ),
        )

    def __str__(self) -> str:
        return f"candidate {self.index} of optimization {self.optimization_id}"


class OptimizationEvaluation(models.Model):
    """One candidate's judged result on one case, so a resumed search need not run it."""

    optimization = models.ForeignKey(
        Optimization, on_delete=models.CASCADE, related_name="evaluations"
    )
    candidate_digest = models.CharField(max_length=64)
    case_id = models.CharField(max_length=500)
    split = models.CharField(max_length=10)
    data = models.JSONField(default=dict)

    class Meta:
        constraints = (
            models.UniqueConstraint(
                fields=["optimization", "candidate_digest", "case_id"],
                name="optimization_evaluation_unique",
            ),
        )

    def __str__(self) -> str:
        return f"{self.case_id} by {self.candidate_digest[:8]}"


class OptimizationReflection(models.Model):
    """A reflection call: its prompt and the reply (the k-th time this prompt was asked)."""

    optimization = models.ForeignKey(
        Optimization, on_delete=models.CASCADE, related_name="reflections"
    )
    prompt_digest = models.CharField(max_length=64)
    occurrence = models.PositiveIntegerField(default=0)
    component = models.CharField(max_length=200)
    prompt = models.TextField()
    reply = models.TextField()
    cost_usd = models.FloatField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = (
            models.UniqueConstraint(
                fields=["optimization", "prompt_digest", "occurrence"],
                name="optimization_reflection_unique",
            ),
        )

    def __str__(self) -> str:
        return f"reflection on {self.component} ({self.prompt_digest[:8]})"
