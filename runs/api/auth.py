"""API authentication: personal tokens (`Authorization: Bearer olo_…`) or a session.

A request with neither is answered 401 (before any CSRF check, which only a signed-in
session needs). Wrong tokens are counted per client address (`runs.writers.tokens`); past
the limit, that client's token attempts answer 429 for the rest of the window.
"""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest
from ninja.errors import HttpError
from ninja.security import HttpBearer, SessionAuth

from runs.access import token_scope_set
from runs.writers.tokens import api_token_authenticate, token_failure_note, token_failures_exceeded


def client_address(request: HttpRequest) -> str:
    return str(request.META.get("REMOTE_ADDR") or "unknown")


class TokenAuth(HttpBearer):
    def authenticate(self, request: HttpRequest, token: str) -> Any:
        client = client_address(request)
        if token_failures_exceeded(client=client):
            raise HttpError(429, "too many wrong API tokens from this address; try again later")
        holder = api_token_authenticate(token=token)
        if holder is None:
            token_failure_note(client=client)
            return None
        token_scope_set(user=holder.user, project_id=holder.project_id)
        request.user = holder.user
        return holder.user


class ActiveSessionAuth(SessionAuth):
    """The dashboard's login session (with Django's CSRF check on writes).

    Without a signed-in user there is nothing to protect from forgery, so the request
    goes on unauthenticated (401) rather than failing the CSRF check (403).
    """

    def __call__(self, request: HttpRequest) -> Any:
        user = getattr(request, "user", None)
        if user is None or not user.is_authenticated or not user.is_active:
            return None
        return super().__call__(request)

    def authenticate(self, request: HttpRequest, key: str | None) -> Any:
        user = getattr(request, "user", None)
        if user is not None and user.is_authenticated and user.is_active:
            return user
        return None


api_auth = [TokenAuth(), ActiveSessionAuth()]
