"""The policy's decision on a run and the people's decisions on it."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.db import models

from runs.errors import ImmutableRecordError
from runs.models.runs import Run


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


class AuditQuerySet(models.QuerySet[Any]):
    """Refuses bulk changes: decisions and their revocations are an audit trail."""

    def update(self, **kwargs: Any) -> int:
        raise ImmutableRecordError(
            "decisions are immutable audit records and cannot be changed; revoke a "
            "decision with a reason instead"
        )

    def delete(self) -> tuple[int, dict[str, int]]:
        raise ImmutableRecordError("decisions are immutable audit records and cannot be deleted")


class AuditRecord(models.Model):
    """A row written once and never changed or deleted."""

    objects = AuditQuerySet.as_manager()

    class Meta:
        abstract = True

    def save(self, *args: Any, **kwargs: Any) -> None:
        if not self._state.adding:
            raise ImmutableRecordError(
                "decisions are immutable audit records and cannot be changed; revoke a "
                "decision with a reason instead"
            )
        super().save(*args, **kwargs)

    def delete(self, *args: Any, **kwargs: Any) -> tuple[int, dict[str, int]]:
        raise ImmutableRecordError("decisions are immutable audit records and cannot be deleted")


class Approval(AuditRecord):
    """Who approved or rejected a gate, when, and why. Written once, never changed.

    A gate has at most one standing decision: `sequence` numbers a gate's decisions
    (unique per gate), and a new one is recorded only once every earlier one has been
    revoked (`ApprovalRevocation`). Overriding a gate that did not pass (fail or
    inconclusive) needs `override` and a reason in `comment`.
    """

    class Decision(models.TextChoices):
        APPROVE = "approve"
        REJECT = "reject"

    gate = models.ForeignKey(Gate, on_delete=models.PROTECT, related_name="approvals")
    sequence = models.PositiveIntegerField(default=0)
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="approvals"
    )
    decision = models.CharField(max_length=10, choices=Decision.choices)
    override = models.BooleanField(default=False)
    comment = models.TextField(blank=True, default="")
    gate_outcome = models.CharField(max_length=20, choices=Gate.Outcome.choices)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = (
            "-created_at",
            "-id",
        )
        permissions = (("approve_gate", "Can approve or reject a release gate"),)
        indexes = (models.Index(fields=["gate", "-created_at"], name="approval_gate_created"),)
        constraints = (
            models.UniqueConstraint(fields=["gate", "sequence"], name="approval_unique_sequence"),
        )

    def __str__(self) -> str:
        return f"{self.decision} of gate {self.gate_id} by {self.user_id}"


class ApprovalRevocation(AuditRecord):
    """The withdrawal of a decision: who, when and why. Written once, never changed."""

    approval = models.OneToOneField(Approval, on_delete=models.PROTECT, related_name="revocation")
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="revocations",
    )
    reason = models.TextField()
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ("-created_at", "-id")

    def __str__(self) -> str:
        return f"revocation of approval {self.approval_id}"
