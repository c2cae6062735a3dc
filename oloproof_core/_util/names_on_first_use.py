"""A package's exported names, each imported from its module when first asked for.

The engine's packages load their surface this way so that a process imports only what
it uses: a system's own process never loads the statistics, a pass/fail run never loads
NumPy, and the store's process records a run without the comparison's arrays.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from typing import Any


def names_on_first_use(
    package: str, exports: Mapping[str, str], namespace: dict[str, Any]
) -> Callable[[str], Any]:
    """The module `__getattr__` for `package`: `exports` maps a name to its module (absolute,
    or relative to `package`); the value found is kept in `namespace`, the package's globals,
    so each name is looked up once."""

    def name_on_first_use(name: str) -> Any:
        module = exports.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(module, package), name)
        namespace[name] = value
        return value

    return name_on_first_use
