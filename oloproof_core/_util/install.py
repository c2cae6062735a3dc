"""Where oloproof's own code lies: the folder that holds the `oloproof_core` package.

Read from the package itself, so no module has to count how deep it sits below it.
"""

from __future__ import annotations

import os

import oloproof_core

INSTALL_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(oloproof_core.__file__)))
"""The folder of `oloproof_core/` and its sibling packages (the repository, or site-packages)."""
