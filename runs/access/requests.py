"""The request every signed-in page and API route receives."""

from __future__ import annotations

from django.contrib.auth.models import User
from django.http import HttpRequest


class AuthenticatedRequest(HttpRequest):
    """A request that passed `login_required` or the API's authentication: its user is an
    account, never AnonymousUser.

    An annotation for views so guarded; Django still builds a plain `HttpRequest`.
    """

    user: User
