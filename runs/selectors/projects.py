"""Projects as their members see them, and the code roots a project's runs may use."""

from __future__ import annotations

from typing import Any

from django.contrib.auth.models import User as Account
from django.db.models import QuerySet

from runs.access import Actor, Role, code_roots_visible, projects_visible
from runs.errors import NotFoundError
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


def project_members(*, project: Project) -> QuerySet[Membership]:
    """A project's members by name (the caller has checked the project with `project_for`)."""
    return (
        Membership.objects.filter(project=project).select_related("user").order_by("user__username")
    )


def project_code_roots_list(*, project: Project) -> QuerySet[CodeRoot]:
    return CodeRoot.objects.filter(project=project).select_related("created_by").order_by("path")


def projects_with_roles(*, user: Actor) -> list[tuple[Project, str]]:
    """The projects `user` sees, each with their role there (admin everywhere for the
    command line and superusers)."""
    held = {}
    account = user if isinstance(user, Account) else None
    if account is not None and not account.is_superuser:
        held = dict(Membership.objects.filter(user=account).values_list("project_id", "role"))
    return [(project, held.get(project.pk, Role.ADMIN)) for project in projects_list(user=user)]


def memberships_of(*, user: Actor) -> QuerySet[Membership]:
    return Membership.objects.filter(project__in=projects_visible(user=user)).select_related(
        "project", "user"
    )


def project_overview(*, user: Actor) -> list[dict[str, Any]]:
    """Each visible project with its members and code roots, in three queries."""
    projects = list(projects_list(user=user).order_by("slug"))
    members: dict[int, list[tuple[str, str]]] = {project.pk: [] for project in projects}
    for membership in Membership.objects.filter(project__in=projects).select_related("user"):
        members[membership.project_id].append((membership.user.get_username(), membership.role))
    roots: dict[int, list[str]] = {project.pk: [] for project in projects}
    for root in CodeRoot.objects.filter(project__in=projects).order_by("path"):
        roots[root.project_id].append(root.path)
    return [
        {
            "slug": project.slug,
            "name": project.name,
            "members": sorted(members[project.pk]),
            "code_roots": roots[project.pk],
        }
        for project in projects
    ]


def project_named(*, slug: str) -> Project:
    """The project with this slug; a NotFoundError that says how to make it otherwise."""
    project = Project.objects.filter(slug=slug).first()
    if project is None:
        raise NotFoundError(f"no project {slug!r}: make it with `oloproof project create {slug}`")
    return project


def account_named(*, username: str) -> Account:
    """The account with this name; a NotFoundError that says how to make it otherwise."""
    account = Account.objects.filter(username=username).first()
    if account is None:
        raise NotFoundError(
            f"no account {username!r}: make it with `oloproof user create {username}`"
        )
    return account
