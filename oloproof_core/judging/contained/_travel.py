"""How an evaluator reaches its process: pickled here, loaded there, never unpickled back.

The evaluator object is pickled with cloudpickle: by reference where a fresh interpreter
imports its module by the same name (an installed package, the project's modules on
`sys.path`, a test module), by value otherwise (a script's `__main__`, a notebook, a
closure, a module loaded from a path under a name of its own). Two kinds are carried
their own way:

- a metric file travels as its path and the very bytes the run loaded and digested
  into its version (`MetricFile.__reduce__`); its process executes them again as the
  run did, so its module-level set-up (a client, a table read beside it) is made there;
- a module of the project loaded from its file (`checks.py:known_label` in a run
  config) is loaded again from that file in the process, under the same name, before
  the pickle is read, so the pickle finds it by reference. Its file must still be the
  one the run read: an edit since would judge with code the version does not name.

The folders of those files are shown, read-only, to the sandbox (`folders`).
"""

from __future__ import annotations

import collections
import io
import marshal
import os
import pickle
import sys
import threading
import types
from collections.abc import Mapping
from dataclasses import dataclass
from types import ModuleType
from typing import Any, ClassVar

from oloproof_core._util.imports import NAMESPACE_PREFIX, load_module
from oloproof_core.configs.code._stand_ins import DeclaredEvaluator
from oloproof_core.execution.isolation import IsolationError
from oloproof_core.judging.evaluators import Evaluator, MetricFile
from oloproof_core.judging.evaluators._source import file_content_digest

_registering = threading.Lock()


@dataclass(frozen=True, slots=True)
class Packed:
    """An evaluator as its process receives it."""

    criterion: str
    pickled: bytes
    files: tuple[tuple[str, str, str], ...]
    """(module name, path, digest) of each project module to load from its file first."""
    folders: tuple[str, ...]
    """The folders the process reads the evaluator's files from (its sandbox shows them)."""


def pack(evaluator: Evaluator) -> Packed:
    """`evaluator` pickled for its process; an IsolationError says what cannot travel."""
    import cloudpickle

    if isinstance(evaluator, DeclaredEvaluator):  # packed where it was imported, passed on
        return Packed(evaluator.criterion, evaluator.pickled, evaluator.files, evaluator.folders)

    tops: dict[str, bool] = {}
    by_value = [
        module for name, module in list(sys.modules.items()) if _by_value(name, module, tops)
    ]
    with _registering:
        registered = []
        try:
            for module in by_value:
                try:
                    cloudpickle.register_pickle_by_value(module)
                except ValueError:  # registered already, or gone meanwhile
                    continue
                registered.append(module)
            data = _dumps(evaluator)
        except Exception as exc:
            raise IsolationError(_unpicklable(evaluator, exc)) from None
        finally:
            for module in registered:
                cloudpickle.unregister_pickle_by_value(module)
    files = tuple(_project_files(data))
    paths = [path for _, path, _ in files]
    if isinstance(evaluator, MetricFile):
        paths.append(evaluator.path)
    folders = tuple(dict.fromkeys(os.path.dirname(path) for path in paths))
    return Packed(evaluator.criterion, data, files, folders)


def _dumps(evaluator: Evaluator) -> bytes:
    """cloudpickle's pickle, with the code of functions sent by value kept whole: its
    file name and lines stay, so a traceback from the process points at the user's file."""
    import cloudpickle

    class KeepingFiles(cloudpickle.Pickler):  # type: ignore[misc]
        # Read when a pickler is made, so set on the class.
        dispatch_table: ClassVar[Mapping[type, Any]] = collections.ChainMap(
            {types.CodeType: _code_reduce}, cloudpickle.Pickler.dispatch_table
        )

    buffer = io.BytesIO()
    KeepingFiles(buffer, protocol=pickle.HIGHEST_PROTOCOL).dump(evaluator)
    return buffer.getvalue()


def _code_reduce(code: types.CodeType) -> tuple[Any, ...]:
    # marshal: the same interpreter reads it in the process.
    return (marshal.loads, (marshal.dumps(code),))


def unpack(packed: Packed) -> Evaluator:
    """Inside the process: load the project's files the pickle names, then the evaluator."""
    for name, path, digest in packed.files:
        if file_content_digest(path) != digest:
            raise IsolationError(
                f"{path} changed after the run loaded it; run again to judge with the new code"
            )
        module = load_module(path, what="evaluator")
        if module.__name__ != name:
            raise IsolationError(f"{path} loaded as {module.__name__}, not as {name}")
    evaluator = pickle.loads(packed.pickled)
    if not isinstance(evaluator, Evaluator):
        raise IsolationError(f"the evaluator {packed.criterion!r} arrived as {evaluator!r}")
    return evaluator


def _project_files(data: bytes) -> list[tuple[str, str, str]]:
    """The project modules (loaded from their files) the pickle names by reference."""
    found = []
    for name, module in list(sys.modules.items()):
        path = getattr(module, "__file__", None)
        if name.startswith(NAMESPACE_PREFIX) and "." in name and path and name.encode() in data:
            found.append((name, os.path.abspath(path), file_content_digest(path)))
    return found


_INSTALLED = tuple(
    os.path.join(os.path.abspath(prefix), "")
    for prefix in {sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix}
)


def _by_value(name: str, module: ModuleType | None, tops: dict[str, bool]) -> bool:
    """A module a fresh interpreter would not find by its name (one loaded from a path
    under a name of its own), so carried by value; the project's file modules and
    installed ones travel by reference. `tops`: the answer per top-level name so far."""
    path = getattr(module, "__file__", None)
    if module is None or not path or name == "__main__" or name.startswith(NAMESPACE_PREFIX):
        return False
    if os.path.abspath(path).startswith(_INSTALLED):
        return False
    top = name.partition(".")[0]
    if top not in tops:
        tops[top] = _found_afresh(top)
    return not tops[top]


def _found_afresh(top: str) -> bool:
    """Whether a fresh interpreter's import system (every finder: `sys.path`, an editable
    install's) finds the top-level module `top` where this process found it."""
    held = getattr(sys.modules.get(top), "__spec__", None)
    for finder in sys.meta_path:
        find_spec = getattr(finder, "find_spec", None)
        try:
            found = None if find_spec is None else find_spec(top, None)
        except (ImportError, ValueError, AttributeError, TypeError):
            continue
        if found is not None:
            return _same_place(found, held)
    return False


def _same_place(found: Any, held: Any) -> bool:
    if held is None:
        return False
    if found.origin is not None and getattr(held, "origin", None) is not None:
        return bool(os.path.realpath(found.origin) == os.path.realpath(held.origin))
    found_paths = {os.path.realpath(p) for p in found.submodule_search_locations or []}
    held_paths = {
        os.path.realpath(p) for p in getattr(held, "submodule_search_locations", None) or []
    }
    return bool(found_paths & held_paths)


def _unpicklable(evaluator: Evaluator, exc: BaseException) -> str:
    return (
        f"the evaluator {evaluator.criterion!r} could not be sent to its process: "
        f"{type(exc).__name__}: {exc}. An evaluator defined in a script, a notebook or a "
        "function travels by value, with everything it refers to; open files, locks, "
        "sockets, clients and threads cannot travel. Create them inside the function, or "
        "define the evaluator in a module of its own."
    )
