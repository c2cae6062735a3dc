"""Which store a run records into when the caller does not pass one."""

from __future__ import annotations

from oloproof_core.store import InMemoryStore, Store

_process_store = InMemoryStore()


def default_store() -> Store:
    """The store `evaluate()` uses by default.

    The verdict cache lives as long as this process, so re-running an unchanged
    evaluator on unchanged outputs in the same session costs nothing.
    """
    return _process_store
