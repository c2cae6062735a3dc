"""Run a function on a module once it is imported: now if it is, or when it first is.

A system's process patches its HTTP clients (`_case_header`) but should not import
them to do so: `httpx` alone takes a fifth of a second, which every async system
process would pay at start-up whether or not it ever calls a model.
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import sys
from collections.abc import Callable, Sequence
from types import ModuleType
from typing import Any

Patch = Callable[[ModuleType], None]


def after_import(names: Sequence[str], patch: Patch) -> None:
    """Call `patch(module)` for each top-level module of `names`, once it is loaded."""
    waiting = []
    for name in names:
        module = sys.modules.get(name)
        if module is not None:
            patch(module)
        else:
            waiting.append(name)
    if waiting:
        sys.meta_path.insert(0, _PatchWhenLoaded(set(waiting), patch))


class _PatchWhenLoaded(importlib.abc.MetaPathFinder):
    """Finds nothing itself: it wraps the loader the other finders give for a module it
    waits for, so that the patch runs right after the module's own code."""

    def __init__(self, names: set[str], patch: Patch) -> None:
        self.names = names
        self.patch = patch

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        if fullname not in self.names:
            return None
        self.names.discard(fullname)
        if not self.names:
            sys.meta_path.remove(self)
        for finder in sys.meta_path:
            find = getattr(finder, "find_spec", None)
            spec: importlib.machinery.ModuleSpec | None = (
                None if find is None or finder is self else find(fullname, path, target)
            )
            if spec is not None:
                if spec.loader is not None:
                    spec.loader = _PatchingLoader(spec.loader, self.patch)
                return spec
        return None


class _PatchingLoader(importlib.abc.Loader):
    def __init__(self, loader: Any, patch: Patch) -> None:
        self._loader = loader
        self._patch = patch

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType | None:
        create = getattr(self._loader, "create_module", None)
        return None if create is None else create(spec)

    def exec_module(self, module: ModuleType) -> None:
        self._loader.exec_module(module)
        self._patch(module)

    def __getattr__(self, name: str) -> Any:
        # Everything else (resources, source, code) is the real loader's.
        return getattr(self._loader, name)
