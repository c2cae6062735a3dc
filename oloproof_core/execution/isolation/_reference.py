"""How a fresh process finds the system: by its module's name, by its file, or by value.

A system whose module a fresh interpreter imports by the same name (`support_bot:answer`,
a package run with `python -m`, whose `__main__` is imported by its real name) or a
project module oloproof loaded from its file (`bot.py:answer`) travels by reference:
the child imports it, exactly as `load_object` would.

Everything else travels by value (`_by_value`): a function of a script's `__main__`,
a notebook cell, a closure, a lambda, a function of a module loaded from a path under a
name no fresh interpreter can import. The child unpickles it and resolves its imports
from the same environment. So every way people write a system runs in its sandbox;
none runs in this process because of how it was written.
"""

from __future__ import annotations

import importlib
import importlib.machinery
import os
import sys
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import Any, Literal

from oloproof_core._util.imports import NAMESPACE_PREFIX, load_module
from oloproof_core.execution.isolation._errors import IsolationError
from oloproof_core.execution.systems import System, as_system

_loading = False


@dataclass(frozen=True, slots=True)
class SystemReference:
    """Where a system's process imports the system from."""

    kind: Literal["module", "file"]
    target: str
    """A module name, or the absolute path of a project file."""
    qualname: str

    def describe(self) -> str:
        return f"{self.target}:{self.qualname}"

    def to_dict(self) -> dict[str, str]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> SystemReference:
        return cls(kind=data["kind"], target=data["target"], qualname=data["qualname"])


def reference_for(system: System) -> SystemReference | None:
    """The reference a fresh process can import `system` by; None if it travels by value."""
    fn = system.fn
    module_name = getattr(fn, "__module__", None)
    qualname = getattr(fn, "__qualname__", None)
    if not module_name or not qualname or "<" in qualname:
        return None
    module = sys.modules.get(module_name)
    if module is None:
        return None
    found = _attribute(module, qualname)
    # A candidate of an optimization is the declared system reading other texts: the
    # same function underneath, which the child rebinds to the candidate's texts.
    same = found is system or found is fn or getattr(found, "inner", None) is system.inner
    if not same:
        return None
    spec = getattr(module, "__spec__", None)
    spec_name = getattr(spec, "name", None)
    if module_name == "__main__":
        if spec_name and spec_name != "__main__" and importable_by_name(spec_name, module):
            return SystemReference("module", spec_name, qualname)
        return None
    file = getattr(module, "__file__", None)
    if module_name.startswith(NAMESPACE_PREFIX) and file:
        # A project's module, imported under its folder's namespace: the child loads the
        # same file the same way, so the namespace (and the module's identity) agree.
        return SystemReference("file", os.path.abspath(file), qualname)
    if not importable_by_name(module_name):
        return None
    return SystemReference("module", module_name, qualname)


def importable_by_name(module_name: str, module: Any = None) -> bool:
    """Whether a fresh interpreter with this `sys.path` imports `module` (by default the
    module this process holds under `module_name`) by that name: a module loaded from a
    path under a name of its own, or found where the path no longer leads, is not. A
    module run with `python -m pkg.mod` is held as `__main__`: pass it as `module`."""
    module = module if module is not None else sys.modules.get(module_name)
    if module is None:
        return False
    top_name = module_name.partition(".")[0]
    top = module if top_name == module_name else sys.modules.get(top_name)
    if top is None:
        return False
    if top_name in sys.builtin_module_names:
        return True
    found = find_afresh(top_name)
    if found is None:
        return False
    held_origin = getattr(getattr(top, "__spec__", None), "origin", None)
    if found.origin is not None and held_origin is not None:
        return _same_path(found.origin, held_origin)
    found_paths = list(found.submodule_search_locations or [])
    held_paths = list(getattr(top, "__path__", None) or [])
    return bool(found_paths) and any(_same_path(a, b) for a in found_paths for b in held_paths)


def find_afresh(name: str) -> Any:
    """The spec a fresh interpreter's finders give a top-level module, past this process's
    module cache: `sys.path`'s finder and the others on `sys.meta_path` (an editable
    install's, for one)."""
    for finder in sys.meta_path:
        find_spec = getattr(finder, "find_spec", None)
        if find_spec is None:
            continue
        try:
            if finder is importlib.machinery.PathFinder:
                found = find_spec(name, [p or "." for p in sys.path])
            else:
                found = find_spec(name, None)
        except Exception:  # a third-party finder that breaks says nothing about this name
            continue
        if found is not None:
            return found
    return None


def _same_path(a: str, b: str) -> bool:
    try:
        return os.path.realpath(a) == os.path.realpath(b)
    except (OSError, ValueError):
        return False


def load_reference(reference: SystemReference) -> System:
    """Import the system a reference names (in the system's process)."""
    global _loading
    _loading = True
    try:
        if reference.kind == "module":
            module = importlib.import_module(reference.target)
        else:
            module = load_module(reference.target, what="system")
    finally:
        _loading = False
    found = _attribute(module, reference.qualname)
    if found is None:
        raise LookupError(f"{reference.describe()} is not there when its module is imported afresh")
    return as_system(found)


def refuse_while_loading() -> None:
    """A module that runs `evaluate()` at import would start processes without end."""
    if _loading:
        raise IsolationError(
            "evaluate() was called while the system's module was being imported in its "
            'own process: put the module\'s run under `if __name__ == "__main__":`'
        )


def _attribute(module: Any, qualname: str) -> Any:
    target = module
    for name in qualname.split("."):
        target = getattr(target, name, None)
        if target is None:
            return None
    return target
