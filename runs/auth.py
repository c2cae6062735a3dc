"""API authentication: personal tokens (`Authorization: Bearer olo_…`) or a session."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from django.contrib.auth.models import User
from django.db.models import Q
from django.http import HttpRequest
from django.utils import timezone
from ninja.security import HttpBearer, SessionAuth

from runs.models import ApiToken
from runs.services import token_digest

_TOUCH_EVERY = timedelta(minutes=1)
"""`last_used_at` is refreshed at most this often, so reads do not each cost a write."""


class AuthenticatedRequest(HttpRequest):
    """A request that passed `login_required` or the API's authentication: its user is an
    account, never AnonymousUser.

    An annotation for views so guarded; Django still builds a plain `HttpRequest`.
    """

    user: User


class TokenAuth(HttpBearer):
    def authenticate(self, request: HttpRequest, token: str) -> Any:
        record = (
            ApiToken.objects.select_related("user")
            .filter(digest=token_digest(token.strip()), revoked_at__isnull=True)
            .first()
        )
        if record is None or not record.user.is_active:
            return None
        now = timezone.now()
        if record.last_used_at is None or now - record.last_used_at > _TOUCH_EVERY:
            ApiToken.objects.filter(pk=record.pk).filter(
                Q(last_used_at__isnull=True) | Q(last_used_at__lt=now - _TOUCH_EVERY)
            ).update(last_used_at=now)
        request.user = record.user
        return record.user


class ActiveSessionAuth(SessionAuth):
    """The dashboard's login session (with Django's CSRF check on writes)."""

    def authenticate(self, request: HttpRequest, key: str | None) -> Any:
        user = getattr(request, "user", None)
        if user is not None and user.is_authenticated and user.is_active:
            return user
        return None


api_auth = [TokenAuth(), ActiveSessionAuth()]
