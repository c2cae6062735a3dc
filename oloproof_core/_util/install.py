"""Where oloproof's own code lies: the folder that holds the `oloproof_core` package.

Counted from this module alone, so no other module has to know how deep it sits.
"""

from __future__ import annotations

import os

_HERE = os.path.dirname(os.path.abspath(__file__))  # oloproof_core/_util

INSTALL_ROOT = os.path.dirname(os.path.dirname(_HERE))
"""The folder of `oloproof_core/` and its sibling packages (the repository, or site-packages)."""
