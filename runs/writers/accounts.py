"""Accounts: made, disabled and enabled again, given a new password; each change on the
audit list (`runs.writers.audit`).

Who may manage which account is `runs.access.accounts_manageable`: the command line
and superusers every account, a project admin the accounts of their projects only.
A generated password is returned to be shown once; only its hash is kept.
"""

from __future__ import annotations

import secrets
from collections.abc import Iterable

from django.contrib.auth.models import Permission
from django.contrib.auth.models import User as Account
from django.contrib.auth.password_validation import validate_password
from django.core.exceptions import ValidationError
from django.db import transaction

from runs.access import LOCAL, Actor, Role, account_of, role_require
from runs.errors import InvalidRequestError
from runs.models import Change, Project
from runs.writers.audit import change_record
from runs.writers.projects import membership_set, project_default_ensure


def account_ensure(*, username: str, password: str, permissions: Iterable[str] = ()) -> Account:
    """The account with this password (made if new) and exactly these `runs` permissions.

    What an account may do in a project comes from its membership (`runs.writers.projects`);
    the Django permissions only open the admin site to staff.
    """
    user, _ = Account.objects.get_or_create(username=username)
    user.set_password(password)
    user.is_active = True
    user.save()
    user.user_permissions.set(
        Permission.objects.filter(content_type__app_label="runs", codename__in=list(permissions))
    )
    return user


def _password_check(password: str, account: Account) -> None:
    try:
        validate_password(password, account)
    except ValidationError as exc:
        raise InvalidRequestError(f"password refused: {' '.join(exc.messages)}") from None


def account_create(
    *,
    username: str,
    password: str | None = None,
    role: str = "runner",
    project: Project | None = None,
    by: Actor = LOCAL,
) -> tuple[Account, str]:
    """A new account, a member of `project` (the default one) in `role`; returns it and its
    password. Needs the admin role in that project.

    Without `password` one is generated (shown to the caller this once). A given
    password must pass the site's password rules.
    """
    username = username.strip()
    if not username:
        raise InvalidRequestError("an account needs a name")
    if role not in Role.values:
        raise InvalidRequestError(f"role must be one of {', '.join(Role.values)}")
    project = project or project_default_ensure()
    role_require(user=by, project=project, role=Role.ADMIN, action="making accounts")
    if Account.objects.filter(username=username).exists():
        raise InvalidRequestError(f"an account named {username!r} already exists")
    chosen = password if password is not None else secrets.token_urlsafe(12)
    _password_check(chosen, Account(username=username))
    with transaction.atomic():
        account = account_ensure(username=username, password=chosen)
        change_record(by=by, action=Change.Action.ACCOUNT_CREATE, subject=username, project=project)
        membership_set(by=by, project=project, user=account, role=role)
    return account, chosen


def account_first_create() -> tuple[Account, str] | None:
    """On a store without any account, an approver `admin` with a generated password.

    None when an account exists already: the first login is made once only.
    """
    with transaction.atomic():
        if Account.objects.exists():
            return None
        return account_create(username="admin", role="admin")


def account_active_set(*, by: Actor, account: Account, active: bool) -> Account:
    """Disable an account (it can no longer sign in nor use its API tokens), or enable it
    again. No one disables their own account: an admin would lock themselves out."""
    actor = account_of(by)
    if not active and actor is not None and actor.pk == account.pk:
        raise InvalidRequestError("you cannot disable your own account")
    if account.is_active == active:
        return account
    with transaction.atomic():
        account.is_active = active
        account.save(update_fields=["is_active"])
        change_record(
            by=by,
            action=Change.Action.ACCOUNT_ENABLE if active else Change.Action.ACCOUNT_DISABLE,
            subject=account.get_username(),
        )
    return account


def account_password_reset(*, by: Actor, account: Account, password: str | None = None) -> str:
    """Give `account` a new password (generated unless given) and return it, to be shown once."""
    chosen = password if password is not None else secrets.token_urlsafe(12)
    _password_check(chosen, account)
    with transaction.atomic():
        account.set_password(chosen)
        account.save(update_fields=["password"])
        change_record(
            by=by,
            action=Change.Action.ACCOUNT_PASSWORD_RESET,
            subject=account.get_username(),
        )
    return chosen
