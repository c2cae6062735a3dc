"""Patching a module when it is loaded, without loading it to patch it."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

PROBE = """
import sys
sys.path.insert(0, {folder!r})
from oloproof_core.isolation._after_import import after_import
import early
seen = []
names = ["early", "late", "never", "missing_entirely"]
after_import(names, lambda module: seen.append((module.__name__, module.ready)))
assert seen == [("early", True)], seen
assert "late" not in sys.modules and "never" not in sys.modules
import late
assert seen == [("early", True), ("late", True)], seen
import late.part  # a submodule is not patched again
assert len(seen) == 2
try:
    import missing_entirely
except ImportError:
    pass
source = late.__spec__.loader.get_filename("late")  # the real loader answers the rest
print("never" in sys.modules, len(seen), source.endswith("__init__.py"))
"""


def test_a_module_is_patched_once_when_loaded_and_never_loaded_for_it(tmp_path: Path) -> None:
    (tmp_path / "early.py").write_text("ready = True\n")
    (tmp_path / "never.py").write_text("ready = True\n")
    (tmp_path / "late").mkdir()
    (tmp_path / "late" / "__init__.py").write_text("ready = True\n")
    (tmp_path / "late" / "part.py").write_text("")
    done = subprocess.run(
        [sys.executable, "-c", PROBE.format(folder=str(tmp_path))],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["False", "2", "True"]
