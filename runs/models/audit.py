"""The audit list's changes beside the gate decisions: who changed a project, an account,
an API token or a run, when, and what (written once, never changed or deleted)."""

from __future__ import annotations

from django.conf import settings
from django.db import models

from runs.models.gates import AuditRecord
from runs.models.projects import Project


class Change(AuditRecord):
    """One change made through a settings page, the REST API or the command line.

    `actor_name` keeps the account's name as it was (or "command line" for the local
    process), and `subject` names what was changed in words: a deleted run, a revoked
    token or a removed member leave no row of their own to point at.
    """

    class Action(models.TextChoices):
        PROJECT_CREATE = "project.create", "project made"
        MEMBER_SET = "member.set", "member's role set"
        MEMBER_REMOVE = "member.remove", "member removed"
        CODE_ROOT_REGISTER = "code_root.register", "code root registered"
        CODE_ROOT_REMOVE = "code_root.remove", "code root removed"
        ACCOUNT_CREATE = "account.create", "account made"
        ACCOUNT_DISABLE = "account.disable", "account disabled"
        ACCOUNT_ENABLE = "account.enable", "account enabled"
        ACCOUNT_PASSWORD_RESET = "account.password_reset", "new password"
        TOKEN_CREATE = "token.create", "API token made"
        TOKEN_REVOKE = "token.revoke", "API token revoked"
        RUN_DELETE = "run.delete", "run deleted"

    project = models.ForeignKey(
        Project, on_delete=models.PROTECT, null=True, blank=True, related_name="changes"
    )
    actor = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="changes_made",
    )
    actor_name = models.CharField(max_length=150)
    action = models.CharField(max_length=30, choices=Action.choices)
    subject = models.CharField(max_length=500)
    detail = models.TextField(blank=True, default="")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ("-created_at", "-id")
        indexes = (models.Index(fields=["project", "-created_at"], name="change_project_created"),)

    def __str__(self) -> str:
        return f"{self.action} {self.subject} by {self.actor_name}"
