"""The one writer of projects, memberships and code roots.

Making a project, giving a member a role and registering a code root are admin
actions (`runs.access`), each on the audit list (`runs.writers.audit`); the default project
is made on demand for runs recorded without one.
"""

from __future__ import annotations

import os

from django.contrib.auth.models import User as Account
from django.db import transaction
from django.utils.text import slugify

from runs.access import Actor, Role, account_of, projects_visible, role_require
from runs.errors import ConflictError, InvalidRequestError, NotPermittedError
from runs.models import DEFAULT_PROJECT_SLUG, Change, CodeRoot, Membership, Project
from runs.writers.audit import change_record


def project_default_ensure() -> Project:
    """The `default` project (made by migration 0004; remade after a database flush)."""
    project, _ = Project.objects.get_or_create(
        slug=DEFAULT_PROJECT_SLUG, defaults={"name": "Default"}
    )
    return project


def project_ensure(*, slug: str, name: str = "", allow_self_approval: bool = False) -> Project:
    """The project `slug` (made if new); an operator's action (the CLI, the demo, tests)."""
    project, created = Project.objects.get_or_create(
        slug=slug, defaults={"name": name or slug, "allow_self_approval": allow_self_approval}
    )
    if not created and project.allow_self_approval != allow_self_approval:
        project.allow_self_approval = allow_self_approval
        project.save(update_fields=["allow_self_approval"])
    return project


def project_create(*, by: Actor, slug: str, name: str = "") -> Project:
    """A new project, made by an admin of some project, who becomes its admin.

    A project admin may start projects but not join others: the new project starts
    with them as its only member.
    """
    if not projects_visible(user=by, role=Role.ADMIN).exists():
        raise NotPermittedError("making a project needs the admin role in a project")
    if not slug or slugify(slug) != slug:
        raise InvalidRequestError(
            f"a project's short name is lower-case letters, digits and dashes, got {slug!r}"
        )
    with transaction.atomic():
        project, created = Project.objects.get_or_create(
            slug=slug, defaults={"name": name.strip() or slug}
        )
        if not created:
            raise ConflictError(f"a project {slug!r} exists already")
        change_record(by=by, action=Change.Action.PROJECT_CREATE, subject=slug, project=project)
        account = account_of(by)
        if account is not None:
            Membership.objects.create(project=project, user=account, role=Role.ADMIN)
    return project


def _last_admin_check(*, project: Project, user: Account, role: str | None) -> None:
    """A project keeps an admin: its last one cannot leave or take a lower role."""
    if role == Role.ADMIN:
        return
    admins = Membership.objects.filter(project=project, role=Role.ADMIN)
    if admins.filter(user=user).exists() and admins.count() == 1:
        raise ConflictError(
            f"{user.get_username()} is the only admin of project {project.slug!r}; "
            "make another member admin first"
        )


def membership_set(*, by: Actor, project: Project, user: Account, role: str) -> Membership:
    """Give `user` one role in `project` (replacing any other); needs the admin role."""
    role_require(user=by, project=project, role=Role.ADMIN, action="managing members")
    if role not in Membership.Role.values:
        raise InvalidRequestError(
            f"role must be one of {', '.join(Membership.Role.values)}, got {role!r}"
        )
    with transaction.atomic():
        _last_admin_check(project=project, user=user, role=role)
        membership, _ = Membership.objects.update_or_create(
            project=project, user=user, defaults={"role": role}
        )
        change_record(
            by=by,
            action=Change.Action.MEMBER_SET,
            subject=user.get_username(),
            project=project,
            detail=role,
        )
    return membership


def membership_remove(*, by: Actor, project: Project, user: Account) -> int:
    role_require(user=by, project=project, role=Role.ADMIN, action="managing members")
    with transaction.atomic():
        _last_admin_check(project=project, user=user, role=None)
        deleted, _ = Membership.objects.filter(project=project, user=user).delete()
        if deleted:
            change_record(
                by=by,
                action=Change.Action.MEMBER_REMOVE,
                subject=user.get_username(),
                project=project,
            )
    return deleted


def code_root_register(*, by: Actor, project: Project, path: str) -> CodeRoot:
    """Let `project`'s runs load code and data from `path` (kept with its links resolved).

    Needs the admin role: registering a folder decides what the workers may execute.
    """
    role_require(user=by, project=project, role=Role.ADMIN, action="registering a code root")
    if not os.path.isabs(path):
        raise InvalidRequestError(f"a code root must be an absolute folder, got {path!r}")
    resolved = os.path.realpath(path)
    if resolved == os.path.sep:
        raise InvalidRequestError("the file system's root cannot be a code root")
    with transaction.atomic():
        root, created = CodeRoot.objects.get_or_create(
            project=project, path=resolved, defaults={"created_by": account_of(by)}
        )
        if created:
            change_record(
                by=by, action=Change.Action.CODE_ROOT_REGISTER, subject=resolved, project=project
            )
    return root


def code_root_how(*, project: Project, folder: str) -> str:
    """How to let `project` run code from `folder`: a project admin registers it, on the
    project's settings page or from the command line where the store is."""
    return (
        f"A project admin registers the folder as a code root of project {project.slug!r} "
        f"on the project's settings page (Settings, then {project.slug}), or with the "
        f"command `oloproof project root {project.slug} {folder}` run where the store is "
        "(in the project's folder, or with the server's DATABASE_URL); then queue it again."
    )


def code_root_unregister(*, by: Actor, project: Project, path: str) -> int:
    role_require(user=by, project=project, role=Role.ADMIN, action="removing a code root")
    resolved = os.path.realpath(path)
    with transaction.atomic():
        deleted, _ = CodeRoot.objects.filter(project=project, path=resolved).delete()
        if deleted:
            change_record(
                by=by, action=Change.Action.CODE_ROOT_REMOVE, subject=resolved, project=project
            )
    return deleted
