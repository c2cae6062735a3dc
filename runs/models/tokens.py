"""Personal API tokens."""

from __future__ import annotations

from django.conf import settings
from django.db import models

from runs.models.projects import Project


class ApiToken(models.Model):
    """A personal API token; only its SHA-256 digest is stored, the token is shown once."""

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="api_tokens"
    )
    project = models.ForeignKey(
        Project,
        on_delete=models.CASCADE,
        null=True,
        blank=True,
        related_name="api_tokens",
        help_text="The one project the token acts in; empty for all of its user's projects.",
    )
    name = models.CharField(max_length=200, blank=True, default="")
    prefix = models.CharField(max_length=12)
    digest = models.CharField(max_length=64, unique=True)
    created_at = models.DateTimeField(auto_now_add=True)
    last_used_at = models.DateTimeField(null=True, blank=True)
    expires_at = models.DateTimeField(null=True, blank=True)
    revoked_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ("-created_at",)

    def __str__(self) -> str:
        return f"token {self.prefix}… of {self.user_id}"
