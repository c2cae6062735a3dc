"""Cases run again alone after their process died with several cases in flight.

An async system's process holds many cases on one event loop. When it dies (a crash,
`os._exit`, memory the kernel took back) or must be killed (a case blocked the loop
past its deadline), the parent cannot tell which case did it: every case in flight
was stopped with it. Losing them all would let one misbehaving case take the others
with it, so each is run again, once, alone in a fresh process: the one that did it
fails again on its own and only it is lost; the others come back as if nothing
happened. A case that fails while alone is not run again.
"""

from __future__ import annotations

from collections import deque

from oloproof_core.cases.case import CaseResult

_IDS_KEPT = 20
"""How many retried cases the provenance names (the count is always whole)."""


class Retries:
    """The cases waiting to run alone, and what the provenance says of those that did."""

    __slots__ = ("_ids", "_waiting", "count")

    def __init__(self) -> None:
        self._waiting: deque[CaseResult] = deque()
        self._ids: list[str] = []
        self.count = 0

    def add(self, record: CaseResult) -> None:
        """Run this case again, alone; it had company in flight when its process ended."""
        self._waiting.append(record)
        self.count += 1
        if len(self._ids) < _IDS_KEPT:
            self._ids.append(record.id)

    def __bool__(self) -> bool:
        return bool(self._waiting)

    def __len__(self) -> int:
        return len(self._waiting)

    def take(self) -> CaseResult:
        return self._waiting.popleft()

    def clear(self) -> None:
        self._waiting.clear()

    def describe(self) -> dict[str, object] | None:
        """The provenance entry, or None when no case was run again."""
        if not self.count:
            return None
        return {
            "cases": self.count,
            "ids": list(self._ids),
            "why": "their process died or was killed with several cases in flight, so each "
            "was run again alone in a fresh process, once",
        }


def failed_alone(reason: str) -> str:
    """The reason of a case that failed again when it ran alone."""
    return f"{reason} (it was run again alone after its process ended with other cases in flight)"
