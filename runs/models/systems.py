"""Systems and their releases (a system at a version)."""

from __future__ import annotations

from django.db import models

from runs.models.projects import Project


class System(models.Model):
    """A system under evaluation, known in its project by the name given in `@system(name=...)`."""

    project = models.ForeignKey(Project, on_delete=models.PROTECT, related_name="systems")
    name = models.CharField(max_length=200)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ("name",)
        constraints = (
            models.UniqueConstraint(fields=["project", "name"], name="system_unique_name"),
        )

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
