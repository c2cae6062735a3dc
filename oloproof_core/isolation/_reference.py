"""How a fresh process finds the system: by module name, by file, or not at all.

A system is passed to its process by reference, never by value: the child imports
the module that defines it, exactly as `load_object` would. Three shapes resolve:

- a function in an importable module (`support_bot:answer`, a test module, a
  package run with `python -m`, whose `__main__` is re-imported by its real name);
- a function in a file loaded with `file.py:name` (re-loaded from the same path);
- a function in the `__main__` of a script (`python bot.py`): the script is loaded
  again under another module name, so its `if __name__ == "__main__":` block does not
  run again (multiprocessing's spawn does the same).

Anything else — a lambda, a closure, a function typed into a notebook or a REPL, an
object that is not the module's attribute of that name — has no reference, and the
pool forks it instead.
"""

from __future__ import annotations

import importlib.util
import os
import sys
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import Any, Literal

from oloproof_core.imports import NAMESPACE_PREFIX, load_module
from oloproof_core.isolation._errors import IsolationError
from oloproof_core.systems import System, as_system

MAIN_ALIAS = "__oloproof_main__"
_loading = False


@dataclass(frozen=True, slots=True)
class SystemReference:
    """Where a system's process imports the system from."""

    kind: Literal["module", "file", "script"]
    target: str
    """A module name, or the absolute path of a file or script."""
    qualname: str

    def describe(self) -> str:
        return f"{self.target}:{self.qualname}"

    def to_dict(self) -> dict[str, str]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> SystemReference:
        return cls(kind=data["kind"], target=data["target"], qualname=data["qualname"])


def reference_for(system: System) -> SystemReference | None:
    """The reference a fresh process can import `system` by; None if it has none."""
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
    if module_name == "__main__" and spec_name and spec_name != "__main__":
        return SystemReference("module", spec_name, qualname)
    file = getattr(module, "__file__", None)
    if module_name == "__main__":
        code = getattr(fn, "__code__", None)
        if file and code is not None and code.co_filename == os.path.abspath(file):
            return SystemReference("script", os.path.abspath(file), qualname)
        return None
    if module_name.startswith(NAMESPACE_PREFIX) and file:
        # A project's module, imported under its folder's namespace: the child loads the
        # same file the same way, so the namespace (and the module's identity) agree.
        return SystemReference("file", os.path.abspath(file), qualname)
    return SystemReference("module", module_name, qualname)


def load_reference(reference: SystemReference) -> System:
    """Import the system a reference names (in the system's process)."""
    global _loading
    _loading = True
    try:
        if reference.kind == "module":
            module = importlib.import_module(reference.target)
        elif reference.kind == "file":
            module = load_module(reference.target, what="system")
        else:
            module = _load_script(reference.target)
    finally:
        _loading = False
    found = _attribute(module, reference.qualname)
    if found is None:
        raise LookupError(f"{reference.describe()} is not there when its module is imported afresh")
    return as_system(found)


def refuse_while_loading() -> None:
    """A script that runs `evaluate()` at import would start processes without end."""
    if _loading:
        raise IsolationError(
            "evaluate() was called while the system's module was being imported in its "
            'own process: put the script\'s run under `if __name__ == "__main__":`'
        )


def _load_script(path: str) -> Any:
    spec = importlib.util.spec_from_file_location(MAIN_ALIAS, path)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot import {path}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[MAIN_ALIAS] = module
    directory = os.path.dirname(path)
    if directory not in sys.path:
        sys.path.insert(0, directory)
    spec.loader.exec_module(module)
    return module


def _attribute(module: Any, qualname: str) -> Any:
    target = module
    for name in qualname.split("."):
        target = getattr(target, name, None)
        if target is None:
            return None
    return target


CAN_FORK = sys.platform.startswith("linux")


def start_method(system: System, start: str) -> tuple[SystemReference | None, str]:
    """How a pool starts `system`'s processes: ("spawn" by reference) or ("fork")."""
    reference = reference_for(system) if start in ("auto", "reference") else None
    if start == "reference" and reference is None:
        raise IsolationError(
            f"{system!r} has no import reference (a lambda, a closure "
            "or a function typed into a notebook); use start='fork'"
        )
    method = "spawn" if reference is not None else "fork"
    if method == "fork" and not CAN_FORK:
        raise IsolationError(
            f"{system!r} has no import reference and this platform "
            "cannot fork; define it in a module or use isolation='thread'"
        )
    return reference, method
