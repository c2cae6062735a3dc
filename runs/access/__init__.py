"""Who may see and do what: the one access helper every page, API route, selector and export uses.

Everything belongs to a project, and a user's membership gives them one role in it
(viewer < runner < approver < admin, each including the ones before). Reads are
scoped by building every queryset on `runs_visible` / `systems_visible` / ...,
so a selector cannot forget the scope: it has no other starting point. Actions
check a role with `role_require`.

The acting party is an `Actor`: a signed-in account, nobody (`AnonymousUser`, who
sees nothing), or `LOCAL`, the process itself (the command line and the workers,
which already hold the database's credentials). A superuser is an admin of every
project. An API token may be limited to one project: its scope is carried on the
request's user (`token_scope_set`) and narrows every read and action.

Records a user may not see are reported as missing (404), never as forbidden, so
ids of other projects' records cannot be probed; a record they see but may not act
on is a NotPermittedError (403).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.contrib.auth.models import AnonymousUser
from django.contrib.auth.models import User as Account
from django.db.models import Q, QuerySet

from runs.errors import InvalidRequestError, NotFoundError, NotPermittedError
from runs.models import (
    ROLE_RANK,
    Approval,
    Change,
    CodeRoot,
    Dataset,
    Gate,
    Membership,
    Optimization,
    Project,
    Run,
    System,
)


@dataclass(frozen=True, slots=True)
class LocalProcess:
    """The process itself (CLI, workers, the demo): trusted like an admin of every project."""

    is_authenticated: bool = True
    is_active: bool = True


LOCAL = LocalProcess()
Actor = Account | AnonymousUser | LocalProcess
Role = Membership.Role

_TOKEN_SCOPE = "oloproof_token_project_id"
"""Attribute of a request's user naming the one project its API token may act in."""


def token_scope_set(*, user: Account, project_id: int | None) -> None:
    """Limit this (request's) user object to one project, as its API token says."""
    setattr(user, _TOKEN_SCOPE, project_id)


def _is_everywhere_admin(user: Actor) -> bool:
    return isinstance(user, LocalProcess) or (
        isinstance(user, Account) and user.is_active and user.is_superuser
    )


def _roles_at_least(role: str) -> list[str]:
    return [name for name, rank in ROLE_RANK.items() if rank >= ROLE_RANK[role]]


def projects_visible(*, user: Actor, role: str = Role.VIEWER) -> QuerySet[Project]:
    """The projects in which `user` holds `role` or a higher one."""
    projects = Project.objects.all()
    if isinstance(user, Account):
        scope = getattr(user, _TOKEN_SCOPE, None)
        if scope is not None:
            projects = projects.filter(pk=scope)
    if _is_everywhere_admin(user):
        return projects
    if not isinstance(user, Account) or not user.is_active:
        return projects.none()
    held = Membership.objects.filter(user=user, role__in=_roles_at_least(role))
    return projects.filter(pk__in=held.values("project_id"))


def runs_visible(*, user: Actor, role: str = Role.VIEWER) -> QuerySet[Run]:
    return Run.objects.filter(project__in=projects_visible(user=user, role=role))


def systems_visible(*, user: Actor) -> QuerySet[System]:
    return System.objects.filter(project__in=projects_visible(user=user))


def datasets_visible(*, user: Actor) -> QuerySet[Dataset]:
    """Datasets are stored once per content and seen through the runs that use them."""
    return Dataset.objects.filter(pk__in=runs_visible(user=user).values("dataset_id"))


def optimizations_visible(*, user: Actor, role: str = Role.VIEWER) -> QuerySet[Optimization]:
    return Optimization.objects.filter(project__in=projects_visible(user=user, role=role))


def gates_visible(*, user: Actor) -> QuerySet[Gate]:
    return Gate.objects.filter(run__in=runs_visible(user=user))


def gates_decidable(*, user: Actor) -> QuerySet[Gate]:
    """Gates `user` may decide: in projects where they are an approver (or an admin), on
    runs they did not submit unless the project allows it (four eyes). None for the
    process itself or anyone signed out: a gate is decided by a person."""
    account = account_of(user)
    if account is None or not account.is_active:
        return Gate.objects.none()
    not_own = (
        Q(run__created_by__isnull=True)
        | ~Q(run__created_by=account)
        | Q(run__project__allow_self_approval=True)
    )
    return Gate.objects.filter(run__in=runs_visible(user=user, role=Role.APPROVER)).filter(not_own)


def submitted_by_self(*, user: Actor, run: Run) -> bool:
    """Whether four eyes keep `user` from deciding or revoking on `run`: they submitted it,
    and its project does not allow deciding one's own run (`allow_self_approval`)."""
    account = account_of(user)
    return (
        account is not None
        and run.created_by_id == account.pk
        and not run.project.allow_self_approval
    )


def approvals_visible(*, user: Actor) -> QuerySet[Approval]:
    return Approval.objects.filter(gate__run__in=runs_visible(user=user))


def code_roots_visible(*, user: Actor, role: str = Role.RUNNER) -> QuerySet[CodeRoot]:
    return CodeRoot.objects.filter(project__in=projects_visible(user=user, role=role))


def changes_visible(*, user: Actor) -> QuerySet[Change]:
    """The audit list's changes `user` may read: those in projects they administer and
    their own (all of them for an admin of every project)."""
    changes = Change.objects.all()
    if _is_everywhere_admin(user):
        return changes
    account = account_of(user)
    if account is None or not account.is_active:
        return changes.none()
    return changes.filter(
        Q(project__in=projects_visible(user=user, role=Role.ADMIN)) | Q(actor=account)
    )


def accounts_manageable(*, user: Actor) -> QuerySet[Account]:
    """Accounts `user` may disable and give new passwords: for an admin of every project,
    all; for a project admin, the accounts that are members of their projects and of
    no other (so no admin reaches past their projects), superusers never."""
    if _is_everywhere_admin(user):
        return Account.objects.all()
    administered = projects_visible(user=user, role=Role.ADMIN)
    if not isinstance(user, Account) or not administered.exists():
        return Account.objects.none()
    elsewhere = Project.objects.exclude(pk__in=administered)
    return (
        Account.objects.filter(memberships__project__in=administered, is_superuser=False)
        .exclude(memberships__project__in=elsewhere)
        .distinct()
    )


def account_for(*, user: Actor, account_id: int, action: str) -> Account:
    """An account `user` may manage (`accounts_manageable`), else NotFoundError."""
    account = accounts_manageable(user=user).filter(pk=account_id).first()
    if account is None:
        raise NotFoundError(f"no account with id {account_id} that you manage ({action})")
    return account


def role_of(*, user: Actor, project: Project) -> str | None:
    """`user`'s role in `project` (admin for LOCAL and superusers), or None."""
    if not projects_visible(user=user).filter(pk=project.pk).exists():
        return None
    if _is_everywhere_admin(user) or not isinstance(user, Account):
        return Role.ADMIN if _is_everywhere_admin(user) else None
    membership = Membership.objects.filter(user=user, project=project).first()
    return None if membership is None else membership.role


def role_allows(*, user: Actor, project: Project, role: str) -> bool:
    held = role_of(user=user, project=project)
    return held is not None and ROLE_RANK[held] >= ROLE_RANK[role]


def role_require(*, user: Actor, project: Project, role: str, action: str) -> None:
    """Refuse `action` unless `user` is at least `role` in `project`.

    Someone who cannot even see the project is told it is not there.
    """
    held = role_of(user=user, project=project)
    if held is None:
        raise NotFoundError(f"no project {project.slug!r}")
    if ROLE_RANK[held] < ROLE_RANK[role]:
        raise NotPermittedError(
            f"{action} needs the {role} role in project {project.slug!r}; you are {held}"
        )


def run_for(*, user: Actor, run_id: int, role: str = Role.VIEWER, action: str = "this") -> Run:
    """The run if `user` may see it (else NotFoundError) and holds `role` in its project."""
    run = (
        runs_visible(user=user)
        .select_related("project", "release__system", "dataset", "gate", "created_by")
        .filter(pk=run_id)
        .first()
    )
    if run is None:
        raise NotFoundError(f"no run with id {run_id}")
    if role != Role.VIEWER:
        role_require(user=user, project=run.project, role=role, action=action)
    return run


def project_for(
    *, user: Actor, slug: str, role: str = Role.VIEWER, action: str = "this"
) -> Project:
    project = projects_visible(user=user).filter(slug=slug).first()
    if project is None:
        raise NotFoundError(f"no project {slug!r}")
    if role != Role.VIEWER:
        role_require(user=user, project=project, role=role, action=action)
    return project


def submit_project_pick(*, user: Actor, slug: str | None) -> Project:
    """The project a run is submitted to: the one named, else the user's only runnable one."""
    if slug:
        return project_for(user=user, slug=slug, role=Role.RUNNER, action="submitting a run")
    runnable = list(projects_visible(user=user, role=Role.RUNNER)[:2])
    if len(runnable) == 1:
        return runnable[0]
    if not runnable:
        raise NotPermittedError("submitting a run needs the runner role in a project")
    raise NotPermittedError("you may run in several projects: name one with 'project'")


def owned_by(user: Actor) -> Q:
    """Rows created by `user` (for four-eyes): never matches for LOCAL or anonymous."""
    if isinstance(user, Account):
        return Q(created_by=user)
    return Q(pk__in=[])


def account_of(user: Any) -> Account | None:
    return user if isinstance(user, Account) else None


MAX_AUTHOR = 200


def author_of(user: Actor, given: str | None, *, refusal: str) -> str:
    """Who a person's record (an annotation, a label) is by: the signed-in account, or the
    name the local process gives; anyone else is refused with `refusal`."""
    account = account_of(user)
    if account is not None:
        return account.get_username()
    if isinstance(user, LocalProcess) and given and given.strip():
        name = given.strip()
        if len(name) > MAX_AUTHOR:
            raise InvalidRequestError(f"an author name holds at most {MAX_AUTHOR} characters")
        return name
    raise NotPermittedError(refusal)
