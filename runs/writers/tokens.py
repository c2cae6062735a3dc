"""The one writer of API tokens: issue, authenticate (with expiry and scope), revoke.

A token is shown once; only its SHA-256 digest is kept. Each token expires
(`OLOPROOF_TOKEN_DAYS`, 90 days by default) and may be limited to one project.
Wrong tokens are counted per client address: after `OLOPROOF_TOKEN_FAILURES` of them
within `OLOPROOF_TOKEN_FAILURE_WINDOW` seconds, that client's token attempts are
refused (429) until the window has passed, right tokens included, so guessing costs
the guesser the window each time.
"""

from __future__ import annotations

import hashlib
import secrets
from dataclasses import dataclass
from datetime import timedelta

from django.conf import settings
from django.contrib.auth.models import User as Account
from django.core.cache import cache
from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from runs.access import LOCAL, Actor, LocalProcess, Role, account_of, role_require
from runs.errors import NotPermittedError
from runs.models import ApiToken, Change, Project
from runs.writers.audit import change_record

TOKEN_PREFIX = "olo_"
_TOKEN_TOUCH_EVERY = timedelta(minutes=1)
"""`last_used_at` is refreshed at most this often, so reads do not each cost a write."""


@dataclass(frozen=True, slots=True)
class TokenHolder:
    user: Account
    project_id: int | None
    """The one project the token may act in, or None for all of its user's projects."""


def token_digest(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8", "surrogatepass")).hexdigest()


def token_lifetime() -> timedelta:
    return timedelta(days=int(getattr(settings, "OLOPROOF_TOKEN_DAYS", 90)))


def _own_tokens_check(*, by: Actor, user: Account, action: str) -> None:
    """A person acts on their own tokens only; the command line on anyone's."""
    if isinstance(by, LocalProcess):
        return
    account = account_of(by)
    if account is None or account.pk != user.pk:
        raise NotPermittedError(f"{action} is for the token's own account")


def api_token_create(
    *,
    user: Account,
    name: str = "",
    project: Project | None = None,
    lifetime: timedelta | None = None,
    by: Actor = LOCAL,
) -> tuple[ApiToken, str]:
    """A new API token for `user`; returns the record and the token, shown only this once.

    A token limited to a project needs its user to be a member there.
    """
    _own_tokens_check(by=by, user=user, action="making an API token")
    if project is not None:
        role_require(user=user, project=project, role=Role.VIEWER, action="a token for it")
    token = TOKEN_PREFIX + secrets.token_urlsafe(32)
    with transaction.atomic():
        record = ApiToken.objects.create(
            user=user,
            name=name[:200],
            project=project,
            prefix=token[:12],
            digest=token_digest(token),
            expires_at=timezone.now() + (lifetime or token_lifetime()),
        )
        change_record(
            by=by,
            action=Change.Action.TOKEN_CREATE,
            subject=f"{record.prefix}… of {user.get_username()}",
            project=project,
            detail=record.name,
        )
    return record, token


def api_token_authenticate(*, token: str) -> TokenHolder | None:
    """Who a live token acts for, or None; notes when the token was last used."""
    now = timezone.now()
    record = (
        ApiToken.objects.select_related("user")
        .filter(digest=token_digest(token.strip()), revoked_at__isnull=True)
        .filter(Q(expires_at__isnull=True) | Q(expires_at__gt=now))
        .first()
    )
    if record is None or not record.user.is_active:
        return None
    if record.last_used_at is None or now - record.last_used_at > _TOKEN_TOUCH_EVERY:
        ApiToken.objects.filter(pk=record.pk).filter(
            Q(last_used_at__isnull=True) | Q(last_used_at__lt=now - _TOKEN_TOUCH_EVERY)
        ).update(last_used_at=now)
    return TokenHolder(user=record.user, project_id=record.project_id)


def api_token_revoke(*, token: ApiToken, by: Actor = LOCAL) -> ApiToken:
    _own_tokens_check(by=by, user=token.user, action="revoking an API token")
    if token.revoked_at is None:
        with transaction.atomic():
            token.revoked_at = timezone.now()
            token.save(update_fields=["revoked_at"])
            change_record(
                by=by,
                action=Change.Action.TOKEN_REVOKE,
                subject=f"{token.prefix}… of {token.user.get_username()}",
                project=token.project,
                detail=token.name,
            )
    return token


def _failures_key(client: str) -> str:
    return "oloproof:token-failures:" + hashlib.sha256(client.encode()).hexdigest()[:32]


def token_failures_exceeded(*, client: str) -> bool:
    limit = int(getattr(settings, "OLOPROOF_TOKEN_FAILURES", 20))
    return int(cache.get(_failures_key(client), 0)) >= limit


def token_failure_note(*, client: str) -> None:
    window = int(getattr(settings, "OLOPROOF_TOKEN_FAILURE_WINDOW", 300))
    key = _failures_key(client)
    if cache.add(key, 1, window):
        return
    try:
        cache.incr(key)
    except ValueError:
        cache.set(key, 1, window)
