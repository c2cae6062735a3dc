"""Projects as their members see them, and the code roots a project's runs may use."""

from __future__ import annotations

from django.db.models import QuerySet

from runs.access import Actor, Role, code_roots_visible, projects_visible
from runs.models import CodeRoot, Membership, Project


def project_code_roots(*, project_id: int) -> list[str]:
    """The folders (resolved) the project's runs may load code and data from."""
    return list(
        CodeRoot.objects.filter(project_id=project_id)
        .order_by("path")
        .values_list("path", flat=True)
    )


def projects_list(*, user: Actor, role: str = Role.VIEWER) -> QuerySet[Project]:
    return projects_visible(user=user, role=role).order_by("slug")


def code_roots_list(*, user: Actor) -> QuerySet[CodeRoot]:
    """Code roots of the projects where `user` may submit runs."""
    return code_roots_visible(user=user).select_related("project").order_by("project__slug", "path")


def memberships_of(*, user: Actor) -> QuerySet[Membership]:
    return Membership.objects.filter(project__in=projects_visible(user=user)).select_related(
        "project", "user"
    )
