"""The ledger of a submitted run's chunks of work."""

from __future__ import annotations

from django.db import models

from runs.models.runs import Run


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
    execution = models.JSONField(default=dict, blank=True)
    """How this chunk's worker ran the system (its pool's provenance: sandbox, protection)."""
    judge_asked = models.JSONField(default=dict, blank=True)
    """With judge repeats: per repeated judge, per case id, each asking's value (None where
    it gave none), for the run's split of the variance between system and judge."""
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
