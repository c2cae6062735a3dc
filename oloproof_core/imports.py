"""Loading user code by reference: `package.module:attribute` or `path/to/file.py:attribute`."""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import os
import sys
import traceback
from typing import Any

from oloproof_core.errors import ConfigError


def load_object(reference: str, *, base_dir: str = ".", what: str = "object") -> Any:
    """Import and return the object a reference names; relative files resolve from base_dir."""
    module_part, sep, attribute = reference.partition(":")
    if not sep or not module_part or not attribute:
        raise ConfigError(f"{what} {reference!r} must look like 'module:name' or 'file.py:name'")
    module = load_module(module_part, base_dir=base_dir, what=what)
    target: Any = module
    for name in attribute.split("."):
        try:
            target = getattr(target, name)
        except AttributeError:
            raise ConfigError(
                f"{what} {reference!r}: {module_part} has no attribute {attribute!r}"
            ) from None
    return target


def user_module_name(path: str) -> str:
    """The module name a user's file is loaded under: unique per file, so two projects'
    `metric.py` or `checks.py` never replace each other, and no name of the platform's
    (`metrics`, `runs`, `evalsite`) or of an installed package is ever taken."""
    stem = os.path.splitext(os.path.basename(path))[0]
    tag = hashlib.sha256(os.path.abspath(path).encode("utf-8")).hexdigest()[:10]
    return f"oloproof_user_{stem}_{tag}"


def load_module(name_or_path: str, *, base_dir: str = ".", what: str = "module") -> Any:
    """A module by file path (relative to base_dir) or by name (looked up in base_dir first).

    A user's folder goes on the end of `sys.path`, never the front, so that its
    siblings import while a folder of theirs named like an installed package or
    one of the platform's (a `metrics/` of metric files) shadows nothing.
    """
    if name_or_path.endswith(".py"):
        path = os.path.abspath(os.path.join(base_dir, name_or_path))
        if not os.path.exists(path):
            raise ConfigError(f"{what}: file {path} not found")
        _ensure_on_path(os.path.dirname(path))
        return _load_file(user_module_name(path), path, what=what)
    base = os.path.abspath(base_dir)
    _ensure_on_path(base)
    top = name_or_path.partition(".")[0]
    local = _local_top_level(base, top)
    if local is not None:
        _load_file(top, local, what=what, package=os.path.basename(local) == "__init__.py")
    try:
        return importlib.import_module(name_or_path)
    except ModuleNotFoundError as exc:
        raise ConfigError(
            f"{what}: cannot import module {name_or_path!r} ({exc}); is it on "
            f"PYTHONPATH or next to the config file in {base_dir}?"
        ) from None
    except Exception as exc:
        raise ConfigError(f"{what}: importing {name_or_path!r} failed: {_where(exc)}") from None


def _local_top_level(base: str, name: str) -> str | None:
    """`base/name.py` or `base/name/__init__.py`, when the module comes from the config's folder."""
    for candidate in (os.path.join(base, name + ".py"), os.path.join(base, name, "__init__.py")):
        if os.path.isfile(candidate):
            return candidate
    return None


def _load_file(name: str, path: str, *, what: str, package: bool = False) -> Any:
    """The module `name` from the file `path`, imported once (again if it was another file)."""
    cached = sys.modules.get(name)
    if cached is not None and getattr(cached, "__file__", None) == path:
        return cached
    locations = [os.path.dirname(path)] if package else None
    spec = importlib.util.spec_from_file_location(name, path, submodule_search_locations=locations)
    if spec is None or spec.loader is None:
        raise ConfigError(f"{what}: cannot import {path}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except Exception as exc:
        sys.modules.pop(name, None)
        raise ConfigError(f"{what}: {path} failed to import: {_where(exc)}") from None
    return module


def _where(exc: BaseException) -> str:
    """The error and the user's line it came from, without the import machinery's frames."""
    if isinstance(exc, SyntaxError) and exc.filename:
        return f"{exc.filename}:{exc.lineno}: SyntaxError: {exc.msg}"
    frames = [
        frame
        for frame in traceback.extract_tb(exc.__traceback__)
        if "importlib" not in frame.filename
    ]
    at = f"{frames[-1].filename}:{frames[-1].lineno}: " if frames else ""
    return f"{at}{type(exc).__name__}: {exc}"


def _ensure_on_path(directory: str) -> None:
    if directory not in sys.path:
        sys.path.append(directory)
