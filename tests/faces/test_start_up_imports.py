"""What starting oloproof imports: only what the command at hand needs.

Each check is a fresh interpreter, so nothing an earlier test imported hides a change
that makes the package, or building the command line, pull in a heavy dependency.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

HEAVY = ("scipy", "django", "ninja", "openai", "numpy.linalg", "jsonschema", "dspy", "gepa")


def imported_after(code: str) -> set[str]:
    probe = f"{code}\nimport json, sys\nprint(json.dumps(sorted(sys.modules)))"
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True, timeout=60
    )
    return set(json.loads(done.stdout.splitlines()[-1]))


@pytest.mark.parametrize(
    "code",
    [
        "import oloproof",
        "from oloproof.cli import build_parser; build_parser()",
        "from oloproof.cli import build_parser; build_parser().parse_args(['run', 'x.yaml'])",
        # a run loads the statistics while its system's processes start, not before
        "from oloproof_core import plan_run, run_evaluation, load_dataset",
    ],
)
def test_start_up_imports_no_heavy_dependency(code: str) -> None:
    heavy = sorted(
        name
        for name in imported_after(code)
        if any(name == top or name.startswith(top + ".") for top in HEAVY)
    )
    assert heavy == [], f"{code!r} imported {heavy[:8]}"
