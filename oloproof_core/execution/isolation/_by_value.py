"""A system carried to its process by value: pickled here with cloudpickle, loaded there.

cloudpickle pickles a function of `__main__` (a script's, a notebook's), a closure or a
lambda by value, with the globals it refers to, and functions of named modules by
reference, so the child resolves imports from the same environment. A module that no
fresh interpreter can import by its name (loaded from a path with `importlib`) is
registered to travel by value too, for the time of one pickling.

Pickle goes one way only: the parent pickles what the user gave it, the child loads
it. The parent never unpickles anything a child sends (`_protocol`).
"""

from __future__ import annotations

import base64
import os
import pickle
import sys
import threading
from collections.abc import Sequence
from types import ModuleType
from typing import Any

from oloproof_core.execution.isolation._errors import IsolationError
from oloproof_core.execution.isolation._reference import (
    SystemReference,
    importable_by_name,
    reference_for,
)
from oloproof_core.execution.systems import System

_registering = threading.Lock()


def pickled_system(system: System) -> str:
    """The system pickled by value, as text for the child's set-up message."""
    import cloudpickle

    modules = [
        module
        for module in _modules_of(system)
        if module.__name__ != "__main__" and not importable_by_name(module.__name__)
    ]
    with _registering:
        registered = []
        try:
            for module in modules:
                try:
                    cloudpickle.register_pickle_by_value(module)
                except ValueError:  # already registered, or not in sys.modules
                    continue
                registered.append(module)
            data = cloudpickle.dumps(system, protocol=pickle.HIGHEST_PROTOCOL)
        except Exception as exc:
            raise IsolationError(_unpicklable(system, exc)) from None
        finally:
            for module in registered:
                cloudpickle.unregister_pickle_by_value(module)
    return base64.b64encode(data).decode("ascii")


def load_pickled(text: str) -> Any:
    """The system the parent pickled (in the system's process)."""
    return pickle.loads(base64.b64decode(text))


def _modules_of(system: System) -> list[ModuleType]:
    """The modules whose functions make up the system: its own and its warm-up's."""
    names = {
        getattr(fn, "__module__", None)
        for fn in (system.inner, system.fn, system.warmup)
        if fn is not None
    }
    return [sys.modules[name] for name in names if name and name in sys.modules]


def _unpicklable(system: System, exc: BaseException) -> str:
    return (
        f"{system!r} could not be sent to its sandbox: {type(exc).__name__}: {exc}. A system "
        "defined in a script, a notebook or a function travels to its process by value, "
        "with everything it refers to; open files, locks, sockets, clients and threads "
        "cannot travel. Create them inside the function or in its warmup= hook (it runs "
        "once in each process), or define the system in a module of its own. Trusted code "
        "may run in this process with isolation='thread' (its measurements are then not "
        "protected)."
    )


def how_system_travels(system: System, start: str) -> tuple[SystemReference | None, str | None]:
    """(its reference, None) or (None, the system pickled by value); `start` is "auto",
    "reference" (refuse a system without one) or "value"."""
    if start not in ("auto", "reference", "value"):
        raise ValueError(f"start must be 'auto', 'reference' or 'value', got {start!r}")
    declared = system.declared_travel()
    if declared is not None:  # read in its sandbox: it travels as it was packed there
        return declared
    reference = reference_for(system) if start != "value" else None
    if reference is not None:
        return reference, None
    if start == "reference":
        raise IsolationError(
            f"{system!r} has no import reference (a lambda, a closure, a function of a "
            "script or a notebook); use start='value'"
        )
    return None, pickled_system(system)


def loading_failed(
    reference: SystemReference | None, failure: str, left_out: Sequence[str] = ()
) -> IsolationError:
    """The run's error when the system's process could not load the system; `left_out`:
    folders on `sys.path` the sandbox did not bind."""
    last = failure.strip().splitlines()[-1] if failure.strip() else "no message"
    if last.startswith("oloproof_core."):  # the loader's own words need no class path
        last = last.partition(": ")[2] or last
    if reference is None:
        what = (
            "your system (defined in a script, a notebook or a function, so sent by value) "
            "could not be loaded in the sandbox"
        )
        hint = (
            "It is loaded there from the same Python environment, read-only, with the "
            "folders on sys.path: every module it uses must be importable from them."
        )
    else:
        what = f"your system's module ({reference.describe()}) could not be loaded in the sandbox"
        hint = "It is imported there afresh, from the same Python environment, read-only."
    if left_out:
        hint += (
            " These folders were not bound into it: "
            + ", ".join(sorted(set(left_out)))
            + " (a folder too broad to bind, such as /tmp or a home folder, or one inside a "
            "path the sandbox hides, such as the store's data folder: keep code and the data "
            "folder apart)."
        )
    message = f"{what}: {last}\n{hint} It was not run anywhere else."
    frames = _user_frames(failure)
    return IsolationError(f"{message}\n\n{frames}" if frames else message)


def _user_frames(failure: str) -> str:
    """The traceback's frames in the user's own files: where it went wrong for them, without
    the loader's frames around it."""
    kept: list[str] = []
    keep = False
    for line in failure.splitlines():
        if line.startswith('  File "'):
            path = line.split('"', 2)[1]
            keep = not any(part in path for part in _LOADER_PATHS) and not path.startswith("<")
        elif not line.startswith("    "):
            keep = False
        if keep:
            kept.append(line)
    return "Traceback (your code):\n" + "\n".join(kept) if kept else ""


_LOADER_PATHS = (
    os.sep + "oloproof_core" + os.sep,
    os.sep + "cloudpickle" + os.sep,
    os.sep + "importlib" + os.sep,
    os.sep + "pickle.py",
)
