"""What a process pool tells its owner as it works: a case sent, a case ended, a process
ready. The metering pool binds gateway keys to cases and starts the gateway on them."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

CaseHook = Callable[[int, str], None]
"""Called with a process's slot and a case's id: right before the case is sent to it, or
right after its reply (or its loss)."""

ReadyHook = Callable[[int, Mapping[str, Any]], None]
"""Called with a process's slot and what it said of itself when ready (its `pid`, and
`models`: whether it loaded a model client), before it is sent a case."""
