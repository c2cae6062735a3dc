"""Projects, their members (one role each) and the folders their code may come from.

Everything a team evaluates belongs to a project: systems (and so releases), runs
(and so cases, verdicts, gates and decisions). Datasets are stored once per content
digest and are seen through the runs that use them. A member's role orders what they
may do: a viewer reads, a runner also submits runs, an approver also decides gates,
an admin also manages members and code roots.
"""

from __future__ import annotations

from django.conf import settings
from django.db import models

DEFAULT_PROJECT_SLUG = "default"
"""The project of runs recorded without one (the CLI, `evaluate()`, the embedded store)."""


class Project(models.Model):
    slug = models.SlugField(max_length=100, unique=True)
    name = models.CharField(max_length=200)
    allow_self_approval = models.BooleanField(
        default=False,
        help_text="Let an approver decide the gate of a run they submitted (four-eyes when off).",
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ("slug",)

    def __str__(self) -> str:
        return self.slug


class Membership(models.Model):
    """A user's role in one project."""

    class Role(models.TextChoices):
        VIEWER = "viewer"
        RUNNER = "runner"
        APPROVER = "approver"
        ADMIN = "admin"

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="memberships")
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="memberships"
    )
    role = models.CharField(max_length=10, choices=Role.choices, default=Role.VIEWER)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ("project", "user")
        constraints = (
            models.UniqueConstraint(fields=["project", "user"], name="membership_unique_user"),
        )

    def __str__(self) -> str:
        return f"{self.user_id} is {self.role} of {self.project_id}"


ROLE_RANK: dict[str, int] = {
    Membership.Role.VIEWER: 1,
    Membership.Role.RUNNER: 2,
    Membership.Role.APPROVER: 3,
    Membership.Role.ADMIN: 4,
}
"""Each role includes every role of a lower rank."""


class CodeRoot(models.Model):
    """A folder (or git checkout) on the workers' machines that a project's code may come from.

    Kept resolved (`os.path.realpath`): a run's system, evaluators, metric files,
    dataset and policy must all resolve inside one of its project's roots.
    """

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="code_roots")
    path = models.CharField(max_length=1000)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="code_roots",
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ("project", "path")
        constraints = (
            models.UniqueConstraint(fields=["project", "path"], name="code_root_unique_path"),
        )

    def __str__(self) -> str:
        return f"{self.path} ({self.project_id})"
