"""Gateway keys: which role a caller speaks for, and which case its calls belong to.

A key is the only credential a system under test receives. It names a role (so a
system's calls are the system's cost, whatever model or role it asks for), and the
parent, never the request, decides which case a call made with it belongs to: no
header, body field or other key a client sends can name a case.

- A process key (`KeyRing.issue`) holds at most one case at a time: the one last bound
  to it (`bind`), until that case ends (`unbind`) or the next one is bound. A call made
  with it belongs to the case it holds when the request reaches the gateway, or to none.
- Binding a case also issues the case's own key. A call made with that key belongs to
  the case while the case is open and to no case once it has ended, so a client made
  during a case, or a thread the case left running, cannot charge a later case of its
  process. A key of one case can reach no other case: it only ever loses its call.

Every request is registered open in the same step that attributes it (`admit`), so the
end of a case finds each call still open for it, and the gateway cuts them then.
"""

from __future__ import annotations

import secrets
import threading
from collections import deque
from dataclasses import dataclass, field
from typing import Any

from oloproof_core.models import ROLES

_PREFIX = "olo-gw-"
KEPT_CASE_KEYS = 64
"""Case keys a process key keeps after their case ended; a call with an older one is refused."""

NEVER_BOUND = "its key had not been bound to a case yet"
BETWEEN_CASES = "its key held no case then: one case had ended and the next had not begun"
AFTER_ITS_CASE = "made with a case's own key after that case had returned"
UNATTRIBUTED_REASONS = (NEVER_BOUND, BETWEEN_CASES, AFTER_ITS_CASE)
"""Why a call belongs to no case, as `GatewayCall.unattributed_reason` says it."""

CASE_ENDED = "its case ended while it was open"
RUN_ENDED = "the run ended while it was open"
GATEWAY_STOPPED = "the gateway stopped while it was open"
CUT_REASONS = (CASE_ENDED, RUN_ENDED, GATEWAY_STOPPED)
"""Why the gateway ended a call before the provider had, as `GatewayCall.cut_reason` says it."""


class GatewayKeyError(KeyError):
    """A key this gateway never issued (or has revoked)."""


@dataclass(slots=True, eq=False)
class _Holder:
    """A process key's state; changed only under the ring's lock."""

    role: str
    label: str
    case: str | None = None
    case_key: str | None = None
    """The open case's own key."""
    bound_once: bool = False
    case_keys: deque[str] = field(default_factory=deque)
    open: set[Ticket] = field(default_factory=set)


@dataclass(slots=True, eq=False)
class Ticket:
    """One request let in: whom it speaks for and the case it belongs to, decided when it
    arrived; while it is open, the task serving it and the call it forwarded, so that
    the gateway can cut it."""

    role: str
    label: str
    case_id: str | None
    unattributed_reason: str | None
    holder: _Holder
    task: Any = None
    call: Any = None
    cut_reason: str | None = None


@dataclass(frozen=True, slots=True)
class _CaseKey:
    holder: _Holder
    case_id: str


class KeyRing:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._holders: dict[str, _Holder] = {}
        self._case_keys: dict[str, _CaseKey] = {}

    def issue(self, role: str, label: str) -> str:
        if role not in ROLES:
            raise ValueError(f"unknown model role {role!r}; roles are {', '.join(ROLES)}")
        key = _new_key()
        with self._lock:
            self._holders[key] = _Holder(role=role, label=label)
        return key

    def revoke(self, key: str) -> None:
        with self._lock:
            holder = self._holders.pop(key, None)
            if holder is not None:
                for case_key in holder.case_keys:
                    self._case_keys.pop(case_key, None)
            else:
                self._case_keys.pop(key, None)

    def bind(self, key: str, case_id: str) -> str:
        """Open `case_id` on a process key (ending the case it held); the case's own key."""
        case_key = _new_key()
        with self._lock:
            holder = self._holder(key)
            holder.case, holder.case_key, holder.bound_once = case_id, case_key, True
            self._case_keys[case_key] = _CaseKey(holder, case_id)
            holder.case_keys.append(case_key)
            if len(holder.case_keys) > KEPT_CASE_KEYS:
                self._case_keys.pop(holder.case_keys.popleft(), None)
        return case_key

    def unbind(self, key: str, case_id: str | None = None) -> list[Ticket]:
        """End `case_id` (or whichever case the key holds); the calls still open for it."""
        with self._lock:
            holder = self._holder(key)
            if case_id is None or holder.case == case_id:
                holder.case = holder.case_key = None
            return [
                ticket
                for ticket in holder.open
                if ticket.case_id is not None and case_id in (None, ticket.case_id)
            ]

    def lookup(self, key: str | None) -> tuple[str, str] | None:
        """The key's role and label; None for a stranger."""
        if not key:
            return None
        with self._lock:
            holder = self._holders.get(key)
            if holder is None:
                case_key = self._case_keys.get(key)
                holder = None if case_key is None else case_key.holder
            return None if holder is None else (holder.role, holder.label)

    def admit(self, key: str | None, task: Any) -> Ticket | None:
        """Attribute a request that arrives now with `key`, and register it open; None
        for a key this ring does not know."""
        if not key:
            return None
        with self._lock:
            holder = self._holders.get(key)
            if holder is not None:
                case_id = holder.case
                why = None if case_id is not None else _no_case(holder)
            else:
                case_key = self._case_keys.get(key)
                if case_key is None:
                    return None
                holder = case_key.holder
                is_open = holder.case_key == key
                case_id = case_key.case_id if is_open else None
                why = None if is_open else AFTER_ITS_CASE
            ticket = Ticket(holder.role, holder.label, case_id, why, holder, task)
            holder.open.add(ticket)
        return ticket

    def close(self, ticket: Ticket) -> None:
        """The request is over (or recorded): no case's end needs to cut it."""
        with self._lock:
            ticket.holder.open.discard(ticket)

    def open_tickets(self) -> list[Ticket]:
        """Every request still open, of every key."""
        with self._lock:
            return [ticket for holder in self._holders.values() for ticket in holder.open]

    def _holder(self, key: str) -> _Holder:
        holder = self._holders.get(key)
        if holder is None:
            raise GatewayKeyError(f"this gateway issued no key {key[:10]}…")
        return holder


def _no_case(holder: _Holder) -> str:
    return BETWEEN_CASES if holder.bound_once else NEVER_BOUND


def _new_key() -> str:
    return _PREFIX + secrets.token_urlsafe(24)
