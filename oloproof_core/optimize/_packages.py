"""The packages an engine searches with, checked before an optimization starts.

`gepa` is one of oloproof's own dependencies, so every install has it; DSPy is the
`dspy` extra. An engine whose package does not import is refused with how to install
it, before any record is made or any model is called.
"""

from __future__ import annotations

import importlib
import sys

from oloproof_core.errors import ConfigError

GEPA_INSTALL = (
    "install it with `{python} -m pip install 'gepa>=0.1.4,<0.2'` (it is one of "
    "oloproof's dependencies: `bash scripts/setup.sh` in oloproof's folder installs it)"
)
DSPY_INSTALL = (
    "install the dspy extra with `bash scripts/setup.sh dspy` in oloproof's folder, or "
    "`{python} -m pip install 'oloproof[dspy]'`"
)


class EngineUnavailableError(ConfigError):
    """An engine's package is not installed where the optimization runs."""


def require_package(module: str, install: str, *, engine: str) -> None:
    """Import `module`, or refuse the engine with how to install it."""
    try:
        importlib.import_module(module)
    except ImportError as exc:
        how = install.format(python=sys.executable)
        raise EngineUnavailableError(
            f"engine {engine} needs the {module!r} package, which does not import in this "
            f"Python ({sys.executable}: {exc}); {how}, then run again"
        ) from None
