"""Accounts and API tokens as the settings pages and the command line list them."""

from __future__ import annotations

from django.contrib.auth.models import User as Account
from django.db.models import Prefetch, QuerySet

from runs.access import Actor, LocalProcess, account_for, account_of, accounts_manageable
from runs.errors import NotFoundError
from runs.models import ApiToken, Membership


def accounts_exist() -> bool:
    """Whether any account exists, active or not: the first login is made only once."""
    return Account.objects.exists()


def accounts_list(*, user: Actor) -> QuerySet[Account]:
    """The accounts `user` manages, by name, each with its memberships and their projects."""
    return (
        accounts_manageable(user=user)
        .prefetch_related(
            Prefetch(
                "memberships",
                queryset=Membership.objects.select_related("project").order_by("project__slug"),
            )
        )
        .order_by("username")
    )


def account_get(*, user: Actor, account_id: int, action: str) -> Account:
    return account_for(user=user, account_id=account_id, action=action)


def tokens_list(*, user: Actor, owner: Account | None = None) -> QuerySet[ApiToken]:
    """API tokens, newest first: a person's own; for the command line anyone's (`owner`'s
    only when given)."""
    tokens = ApiToken.objects.select_related("user", "project").order_by("-created_at", "-id")
    if isinstance(user, LocalProcess):
        return tokens if owner is None else tokens.filter(user=owner)
    account = account_of(user)
    if account is None or not account.is_active:
        return tokens.none()
    return tokens.filter(user=account)


def token_get(*, user: Actor, token_id: int | None = None, prefix: str | None = None) -> ApiToken:
    """One of the tokens `user` may list, by id or by its 12-character prefix."""
    tokens = tokens_list(user=user)
    if token_id is not None:
        tokens = tokens.filter(pk=token_id)
    if prefix is not None:
        tokens = tokens.filter(prefix=prefix.rstrip("…").strip())
    found = list(tokens[:2])
    if len(found) != 1:
        shown = prefix if prefix is not None else token_id
        raise NotFoundError(f"no single API token {shown!r}: see `oloproof token list`")
    return found[0]
