"""The one writer of projects, memberships and code roots.

Making a project, giving a member a role and registering a code root are admin
actions (`runs.access`); the default project is made on demand for runs recorded
without one.
"""

from __future__ import annotations

import os

from django.contrib.auth.models import User as Account
from django.db import transaction

from runs.access import Actor, Role, account_of, role_require
from runs.errors import InvalidRequestError
from runs.models import DEFAULT_PROJECT_SLUG, CodeRoot, Membership, Project


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


def membership_set(*, by: Actor, project: Project, user: Account, role: str) -> Membership:
    """Give `user` one role in `project` (replacing any other); needs the admin role."""
    role_require(user=by, project=project, role=Role.ADMIN, action="managing members")
    if role not in Membership.Role.values:
        raise InvalidRequestError(
            f"role must be one of {', '.join(Membership.Role.values)}, got {role!r}"
        )
    membership, _ = Membership.objects.update_or_create(
        project=project, user=user, defaults={"role": role}
    )
    return membership


def membership_remove(*, by: Actor, project: Project, user: Account) -> int:
    role_require(user=by, project=project, role=Role.ADMIN, action="managing members")
    deleted, _ = Membership.objects.filter(project=project, user=user).delete()
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
        root, _ = CodeRoot.objects.get_or_create(
            project=project, path=resolved, defaults={"created_by": account_of(by)}
        )
    return root


def code_root_how(*, project: Project, folder: str) -> str:
    """How to let `project` run code from `folder`: the one way there is, the command line
    on the machine that holds the store (no page registers code roots)."""
    return (
        f"A project admin registers the folder as a code root of project {project.slug!r} "
        f"with the command `oloproof project root {project.slug} {folder}`, run where the "
        "store is (in the project's folder, or with the server's DATABASE_URL); then "
        "queue it again."
    )


def code_root_unregister(*, by: Actor, project: Project, path: str) -> int:
    role_require(user=by, project=project, role=Role.ADMIN, action="removing a code root")
    deleted, _ = CodeRoot.objects.filter(project=project, path=os.path.realpath(path)).delete()
    return deleted
