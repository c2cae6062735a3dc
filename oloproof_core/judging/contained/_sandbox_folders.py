"""A system's sandbox that also shows, read-only, the folders of an evaluator's files.

A system's sandbox shows the folders on `sys.path`. A metric file, or an evaluator's
module loaded from its file, may lie elsewhere (beside the run's config, in a test's
temporary folder) and import modules or read files beside it: its processes are shown
those folders too, as a system loaded from its file is shown its own. Everything else
about the sandbox (what it hides, its caps) stays as the run's sandbox makes it.
"""

from __future__ import annotations

from collections.abc import Sequence

from oloproof_core.execution.isolation._sandbox import Sandbox


def show_folders(sandbox: Sandbox, folders: Sequence[str]) -> None:
    """Make `sandbox` bind `folders` beside the folders on `sys.path` of each process."""
    if not folders:
        return
    command = sandbox.command

    def with_folders(argv: Sequence[str], *, cwd: str, sys_path: Sequence[str]) -> list[str]:
        return command(argv, cwd=cwd, sys_path=[*sys_path, *folders])

    sandbox.command = with_folders  # type: ignore[method-assign]
