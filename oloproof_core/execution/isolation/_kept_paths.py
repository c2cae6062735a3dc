"""The paths every sandbox this process makes hides from the system it runs.

A registry of its own, with nothing else imported: `oloproof run` registers the local
store's folder as it starts the store's process, before it has loaded the sandbox.
"""

from __future__ import annotations

import os

_kept_from_systems: set[str] = set()


def keep_from_systems(*paths: str | os.PathLike[str]) -> None:
    """Hide these paths from every sandbox this process makes from now on: the store's
    folder and file, which no run's system has any business reading."""
    _kept_from_systems.update(os.path.abspath(os.fspath(path)) for path in paths)


def kept_from_systems() -> tuple[str, ...]:
    """The paths every sandbox made from now on hides (`keep_from_systems`)."""
    return tuple(_kept_from_systems)
