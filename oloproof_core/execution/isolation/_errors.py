"""What can go wrong with isolation itself, as opposed to a system's own failures."""

from __future__ import annotations

from oloproof_core.errors import OloproofError


class IsolationError(OloproofError):
    """The system could not be run in its own process at all (it never became ready)."""
