"""The audit list's changes (projects, members, code roots, accounts, tokens, runs)."""

from __future__ import annotations

from django.db.models import QuerySet

from runs.access import Actor, changes_visible
from runs.models import Change


def changes_audit(*, user: Actor) -> QuerySet[Change]:
    """The changes `user` may read, newest first."""
    return changes_visible(user=user).select_related("project").order_by("-created_at", "-id")
