"""The one writer of the audit list's changes (`runs.models.Change`).

Every writer of projects, memberships, code roots, accounts, API tokens and run
deletions calls `change_record` in the same transaction as its change, so a change
is on the list exactly when it happened.
"""

from __future__ import annotations

from runs.access import Actor, account_of
from runs.models import Change, Project

LOCAL_ACTOR_NAME = "command line"
"""Who the local process (the command line, the workers) is on the audit list."""


def change_record(
    *, by: Actor, action: str, subject: str, project: Project | None = None, detail: str = ""
) -> Change:
    account = account_of(by)
    return Change.objects.create(
        project=project,
        actor=account,
        actor_name=account.get_username() if account is not None else LOCAL_ACTOR_NAME,
        action=action,
        subject=subject[:500],
        detail=detail,
    )
