"""Loading user code by reference: `package.module:attribute` or `path/to/file.py:attribute`."""

from __future__ import annotations

import importlib
import importlib.util
import os
import sys
from typing import Any

from oloproof_core.errors import ConfigError


def load_object(reference: str, *, base_dir: str = ".", what: str = "object") -> Any:
    """Import and return the object a reference names; relative files resolve from base_dir."""
    module_part, sep, attribute = reference.partition(":")
    if not sep or not module_part or not attribute:
        raise ConfigError(f"{what} {reference!r} must look like 'module:name' or "
                          "'file.py:name'")
    module = load_module(module_part, base_dir=base_dir, what=what)
    target: Any = module
    for name in attribute.split("."):
        try:
            target = getattr(target, name)
        except AttributeError:
            raise ConfigError(f"{what} {reference!r}: {module_part} has no attribute "
                              f"{attribute!r}") from None
    return target


def load_module(name_or_path: str, *, base_dir: str = ".", what: str = "module") -> Any:
    if name_or_path.endswith(".py"):
        path = os.path.abspath(os.path.join(base_dir, name_or_path))
        if not os.path.exists(path):
            raise ConfigError(f"{what}: file {path} not found")
        module_name = "oloproof_user_" + os.path.splitext(os.path.basename(path))[0]
        cached = sys.modules.get(module_name)
        if cached is not None and getattr(cached, "__file__", None) == path:
            return cached
        spec = importlib.util.spec_from_file_location(module_name, path)
        if spec is None or spec.loader is None:
            raise ConfigError(f"{what}: cannot import {path}")
        module = importlib.util.module_from_spec(spec)
        sys.modules[module_name] = module
        _ensure_on_path(os.path.dirname(path))
        spec.loader.exec_module(module)
        return module
    _ensure_on_path(os.path.abspath(base_dir))
    try:
        return importlib.import_module(name_or_path)
    except ModuleNotFoundError as exc:
        raise ConfigError(f"{what}: cannot import module {name_or_path!r} ({exc}); is it on "
                          f"PYTHONPATH or next to the config file in {base_dir}?") from None


def _ensure_on_path(directory: str) -> None:
    if directory not in sys.path:
        sys.path.insert(0, directory)
