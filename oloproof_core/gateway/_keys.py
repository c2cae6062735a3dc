"""Gateway keys: which role a caller speaks for, and which case its calls belong to.

A key is the only credential a system under test receives. It names a role (so a
system's calls are the system's cost, whatever model or role it asks for) and a
set of open cases that the parent, not the system, decides.

Attribution of one call:
- a single-case key (the default) belongs to the case last bound to it; the
  `X-Oloproof-Case` header is ignored, so a child running one case at a time cannot
  move cost between cases at all;
- a concurrent key (`concurrent=True`, for a child running several cases at once)
  belongs to the case its `X-Oloproof-Case` header names when that case is open for
  the key; without the header, to the only open case if exactly one is open;
- anything else is unattributed: recorded with `case_id=None`, still in the totals.
"""

from __future__ import annotations

import secrets
import threading
from dataclasses import dataclass, field

from oloproof_core.models import ROLES

_PREFIX = "olo-gw-"


class GatewayKeyError(KeyError):
    """A key this gateway never issued (or has revoked)."""


@dataclass(slots=True)
class KeyGrant:
    """What one key may do; mutable only through the ring's lock."""

    role: str
    label: str
    concurrent: bool
    open_cases: set[str] = field(default_factory=set)


class KeyRing:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._grants: dict[str, KeyGrant] = {}

    def issue(self, role: str, label: str, *, concurrent: bool) -> str:
        if role not in ROLES:
            raise ValueError(f"unknown model role {role!r}; roles are {', '.join(ROLES)}")
        key = _PREFIX + secrets.token_urlsafe(24)
        with self._lock:
            self._grants[key] = KeyGrant(role=role, label=label, concurrent=concurrent)
        return key

    def revoke(self, key: str) -> None:
        with self._lock:
            self._grants.pop(key, None)

    def bind(self, key: str, case_id: str) -> None:
        with self._lock:
            grant = self._grant(key)
            if not grant.concurrent:
                grant.open_cases.clear()
            grant.open_cases.add(case_id)

    def unbind(self, key: str, case_id: str | None = None) -> None:
        with self._lock:
            grant = self._grant(key)
            if case_id is None:
                grant.open_cases.clear()
            else:
                grant.open_cases.discard(case_id)

    def lookup(self, key: str | None) -> tuple[str, str, bool] | None:
        """The key's role, label and whether it is concurrent; None for a stranger."""
        if not key:
            return None
        with self._lock:
            grant = self._grants.get(key)
            return None if grant is None else (grant.role, grant.label, grant.concurrent)

    def case_for(self, key: str, header: str | None) -> str | None:
        """The case a call made now with `key` (and this header value) belongs to."""
        with self._lock:
            grant = self._grants.get(key)
            if grant is None:
                return None
            if not grant.concurrent:
                return next(iter(grant.open_cases), None)
            if header is not None:
                return header if header in grant.open_cases else None
            if len(grant.open_cases) == 1:
                return next(iter(grant.open_cases))
            return None

    def _grant(self, key: str) -> KeyGrant:
        grant = self._grants.get(key)
        if grant is None:
            raise GatewayKeyError(f"this gateway issued no key {key[:10]}…")
        return grant
