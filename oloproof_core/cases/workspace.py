"""A case's workspace in the system's process: made and seeded before the call, the
process's working directory during it, packed and removed after it.

Each workspace is a fresh folder under the process's temporary folder (inside a
sandbox, its private `/tmp`, whose size cap is the workspace's), with a name no other
case shares. A process holds one case at a time and its next case starts after this
folder is gone, so a case never sees another case's workspace: not one that ran before
in the same process (removed), nor one running beside it (another process, another
`/tmp`).
"""

from __future__ import annotations

import os
import shutil
import tempfile
from typing import Any

from oloproof_core.cases.workspace_pack import pack_workspace
from oloproof_core.datasets.workspace_files import (
    FILES_KEY,
    WorkspacePathError,
    has_workspace,
    inside_path,
)
from oloproof_core.errors import OloproofError


class WorkspaceError(OloproofError):
    """A case's workspace could not be made as its row asks (a path leaving it, say)."""


class CaseWorkspace:
    """One case's folder; `open` makes it, `finish` packs and removes it."""

    __slots__ = ("_before", "path")

    def __init__(self, path: str) -> None:
        self.path = path
        self._before: str | None = None

    @classmethod
    def open(cls, case_input: Any) -> CaseWorkspace | None:
        """The case's seeded workspace, or None when its input carries no files."""
        if not has_workspace(case_input):
            return None
        files = case_input[FILES_KEY]
        try:
            checked = {inside_path(path): text for path, text in files.items()}
        except WorkspacePathError as exc:
            raise WorkspaceError(f"input.files: {exc}") from None
        workspace = cls(tempfile.mkdtemp(prefix="oloproof-workspace-"))
        try:
            for path, text in checked.items():
                workspace.seed(path, text)
        except OSError as exc:  # a file that is also another's folder, a /tmp that is full
            _remove(workspace.path)
            raise WorkspaceError(f"input.files: the workspace could not be seeded: {exc}") from None
        except BaseException:
            shutil.rmtree(workspace.path, ignore_errors=True)
            raise
        return workspace

    def seed(self, path: str, text: Any) -> None:
        if not isinstance(text, str):
            raise WorkspaceError(
                f"input.files: the file {path!r} holds {type(text).__name__}, not text"
            )
        target = os.path.join(self.path, *path.split("/"))
        os.makedirs(os.path.dirname(target), exist_ok=True)
        with open(target, "w", encoding="utf-8", newline="") as handle:
            handle.write(text)

    def enter(self) -> None:
        """Make the workspace the process's working directory for the call."""
        self._before = os.getcwd()
        os.chdir(self.path)

    def finish(self) -> dict[str, Any]:
        """The files as the system left them (packed), then the folder is gone."""
        if self._before is not None:
            os.chdir(self._before)
            self._before = None
        try:
            return pack_workspace(self.path)
        finally:
            _remove(self.path)


def _remove(path: str) -> None:
    """Remove the folder whole, even where the system closed a folder to itself."""
    try:
        os.chmod(path, 0o700)
        for here, folders, _ in os.walk(path):
            for name in folders:
                folder = os.path.join(here, name)
                if not os.path.islink(folder):  # a link's target is not the workspace's
                    os.chmod(folder, 0o700)
    except OSError:
        pass  # removed as far as it can be
    shutil.rmtree(path, ignore_errors=True)
