"""Keeping a long-lived worker's copy of a project's code as current as the files.

Python imports a module once per process, so a worker that ran a system or an
evaluator keeps that version even after its file is edited, and would judge the
next run with old code under the old evaluator version. Before a run's code is
loaded, `forget_changed_project_code` drops every module of the run's folder from
the import cache if any of their files changed since they were loaded; the loader
then imports them afresh. Modules outside the folder (installed packages, the
platform itself) are never dropped.
"""

from __future__ import annotations

import contextlib
import functools
import importlib
import importlib.util
import os
import sys
import threading

_lock = threading.Lock()
_loaded_stamps: dict[str, tuple[int, int]] = {}
"""Module file -> (mtime_ns, size) when the module was last (re)loaded."""


PLATFORM_PACKAGES = ("evalsite", "metrics", "oloproof", "oloproof_core", "runs")
"""oloproof's own packages: their modules are never dropped as if they were a project's."""


@functools.cache
def _never_dropped() -> tuple[str, ...]:
    """Folders whose modules stay loaded: the interpreter's and oloproof's own packages.

    Found from the import system's records (without importing the packages, which
    would tie this module to every layer above it).
    """
    folders = {sys.prefix, sys.base_prefix}
    for name in PLATFORM_PACKAGES:
        spec = importlib.util.find_spec(name)
        for location in (spec.submodule_search_locations or []) if spec else []:
            folders.add(str(location))
    both = {variant for folder in folders for variant in (folder, os.path.realpath(folder))}
    return tuple(os.path.join(os.path.abspath(folder), "") for folder in both)


def _stamp(path: str) -> tuple[int, int] | None:
    try:
        status = os.stat(path)
    except OSError:
        return None
    return status.st_mtime_ns, status.st_size


def _project_modules(base_dir: str) -> dict[str, str]:
    """Name -> file of the imported modules that live in `base_dir` (outside the platform).

    A prefix test on the paths as imported, without touching the file system: it runs
    for every chunk over every loaded module. The loader imports a run's files by
    absolute paths built from its base folder, so the prefixes agree.
    """
    folder = os.path.join(os.path.abspath(base_dir), "")
    excluded = _never_dropped()
    found = {}
    for name, module in list(sys.modules.items()):
        path = getattr(module, "__file__", None)
        if isinstance(path, str) and path.startswith(folder) and not path.startswith(excluded):
            found[name] = path
    return found


def forget_changed_project_code(base_dir: str) -> list[str]:
    """Drop the folder's modules from the import cache if any of their files changed.

    All of them, not only the changed ones: an unchanged module may hold names it
    imported from a changed one. Returns the dropped module names.
    """
    with _lock:
        modules = _project_modules(base_dir)
        changed = any(_stamp(path) != _loaded_stamps.get(path) for path in modules.values())
        if not changed:
            return []
        for name, path in modules.items():
            sys.modules.pop(name, None)
            _loaded_stamps.pop(path, None)
            _drop_bytecode(path)
        importlib.invalidate_caches()
        return sorted(modules)


def _drop_bytecode(path: str) -> None:
    """Remove the cached bytecode: it is checked by whole-second mtime and size, so an edit
    of the same length within the same second would otherwise load the old code."""
    if not path.endswith(".py"):
        return
    # cache_from_source raises NotImplementedError on interpreters that keep no bytecode
    # cache (no cache tag); there is then nothing to remove.
    with contextlib.suppress(OSError, NotImplementedError, ValueError):
        os.remove(importlib.util.cache_from_source(path))


def remember_project_code(base_dir: str) -> None:
    """Note the files of the folder's modules as they are now, right after loading them."""
    with _lock:
        for path in _project_modules(base_dir).values():
            stamp = _stamp(path)
            if stamp is not None:
                _loaded_stamps.setdefault(path, stamp)
