"""What a process pool tells its owner as it works: a case sent, a case ended, a process
ready. The metering pool binds gateway keys to cases (and gives each case its own key)
and starts the gateway on them."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

CaseHook = Callable[[int, str], None]
"""Called with a process's slot and a case's id right after the case's reply (or its loss)."""

CaseStartHook = Callable[[int, str], Mapping[str, str] | None]
"""Called with a process's slot and a case's id right before the case is sent to it; what
it returns is set in the process's environment for that case (the case's own gateway key)."""

ReadyHook = Callable[[int, Mapping[str, Any]], None]
"""Called with a process's slot and what it said of itself when ready (its `pid`, and
`models`: whether it loaded a model client), before it is sent a case."""
