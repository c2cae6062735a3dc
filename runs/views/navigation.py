"""What the navigation offers a signed-in member: links and buttons by project role.

Every page's header shows "New run" (and the Optimizations page "New optimization")
to those who may queue runs, Settings to everyone (their own API tokens) with the
projects' and accounts' settings for project admins, the approver tag to those who may
decide gates, and the number of gates waiting for their decision. All of them come
from the project roles
(`runs.access`, the helper the views use), never from Django's model permissions.
Each figure is read only when a template uses it, at most once per page.
"""

from __future__ import annotations

from functools import cached_property
from typing import Any

from django.http import HttpRequest

from runs.access import Actor, Role, projects_visible
from runs.selectors.gates import gates_to_decide


class Navigation:
    """The signed-in user's roles as the navigation needs them, read lazily."""

    def __init__(self, user: Actor) -> None:
        self.user = user

    @cached_property
    def can_run(self) -> bool:
        """A runner (or more) in some project: may use the New-run form."""
        return projects_visible(user=self.user, role=Role.RUNNER).exists()

    @cached_property
    def can_approve(self) -> bool:
        """An approver (or more) in some project: may decide gates."""
        return projects_visible(user=self.user, role=Role.APPROVER).exists()

    @cached_property
    def can_administer(self) -> bool:
        """An admin of some project: may manage its members, code roots and accounts."""
        return projects_visible(user=self.user, role=Role.ADMIN).exists()

    @cached_property
    def gates_waiting(self) -> int:
        """Gates waiting for this user's decision (their queue on the Gates page)."""
        return gates_to_decide(user=self.user).count() if self.can_approve else 0


def navigation(request: HttpRequest) -> dict[str, Any]:
    """Template context processor: `nav` for a signed-in user."""
    user = getattr(request, "user", None)
    if user is None or not user.is_authenticated:
        return {}
    return {"nav": Navigation(user)}
