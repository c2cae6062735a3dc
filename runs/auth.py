"""API authentication: personal tokens (`Authorization: Bearer olo_…`) or a session."""

from __future__ import annotations

from typing import Any

from django.contrib.auth.models import User
from django.http import HttpRequest
from ninja.security import HttpBearer, SessionAuth

from runs.services import api_token_authenticate


class AuthenticatedRequest(HttpRequest):
    """A request that passed `login_required` or the API's authentication: its user is an
    account, never AnonymousUser.

    An annotation for views so guarded; Django still builds a plain `HttpRequest`.
    """

    user: User


class TokenAuth(HttpBearer):
    def authenticate(self, request: HttpRequest, token: str) -> Any:
        user = api_token_authenticate(token=token)
        if user is not None:
            request.user = user
        return user


class ActiveSessionAuth(SessionAuth):
    """The dashboard's login session (with Django's CSRF check on writes)."""

    def authenticate(self, request: HttpRequest, key: str | None) -> Any:
        user = getattr(request, "user", None)
        if user is not None and user.is_authenticated and user.is_active:
            return user
        return None


api_auth = [TokenAuth(), ActiveSessionAuth()]
