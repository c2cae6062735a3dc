"""A workspace as it travels: packed by the system's process, checked by the run, unpacked
by an evaluator's process into a folder of its own.

Packed, it is JSON data (the wire carries nothing else): `{"files": [[path, "text" |
"base64", content], ...], "bytes": n, "left_out": [reason, ...]}`, files in path order so
its digest is the same for the same files. What is not packed is said in `left_out`:
links (never followed: a link could point anywhere the system can read), `__pycache__`
folders (bytecode the evaluator's Python makes again), and files past the cap.
"""

from __future__ import annotations

import base64
import os
import shutil
import tempfile
import weakref
from collections.abc import Mapping
from typing import Any

from oloproof_core.datasets.workspace_files import WorkspacePathError, inside_path

MAX_PACKED_BYTES = 16 * 2**20
"""The bytes of the files one workspace carries to its evaluators (the reply cap,
OLOPROOF_SANDBOX_OUTPUT_MB, is 64 MiB by default; base64 adds a third)."""
MAX_PACKED_FILES = 10_000
_SKIPPED_FOLDERS = frozenset({"__pycache__"})
_SHOWN_NAMES = 20


def pack_workspace(root: str) -> dict[str, Any]:
    """The files under `root`, as JSON data, within the caps."""
    files: list[list[str]] = []
    total, links, over = 0, [], []
    skipped_caches = 0
    for here, folders, names in os.walk(root):
        skipped_caches += sum(name in _SKIPPED_FOLDERS for name in folders)
        links += [
            _shown(root, here, name) for name in folders if os.path.islink(os.path.join(here, name))
        ]
        folders[:] = sorted(name for name in folders if name not in _SKIPPED_FOLDERS)
        for name in sorted(names):
            path = os.path.join(here, name)
            shown = _shown(root, here, name)
            if os.path.islink(path) or not os.path.isfile(path):
                links.append(shown)
                continue
            size = os.path.getsize(path)
            if total + size > MAX_PACKED_BYTES or len(files) >= MAX_PACKED_FILES:
                over.append(shown)
                continue
            try:
                with open(path, "rb") as handle:
                    data = handle.read(MAX_PACKED_BYTES - total)
            except OSError:  # a file the system closed to itself
                links.append(shown)
                continue
            total += len(data)
            files.append([shown, *_encoded(data)])
    files.sort()
    return {"files": files, "bytes": total, "left_out": _left_out(links, over, skipped_caches)}


def _shown(root: str, here: str, name: str) -> str:
    return os.path.relpath(os.path.join(here, name), root).replace(os.sep, "/")


def _encoded(data: bytes) -> list[str]:
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return ["base64", base64.b64encode(data).decode("ascii")]
    return ["text", text] if "\x00" not in text else ["base64", base64.b64encode(data).decode()]


def _left_out(links: list[str], over: list[str], caches: int) -> list[str]:
    said = []
    if links:
        said.append(
            f"{len(links)} links, special or unreadable files (not followed): {_names(links)}"
        )
    if caches:
        said.append(f"{caches} __pycache__ folders")
    if over:
        said.append(
            f"{len(over)} files past the cap of {MAX_PACKED_BYTES // 2**20} MiB or "
            f"{MAX_PACKED_FILES:,} files a workspace carries: {_names(over)}"
        )
    return said


def _names(paths: list[str]) -> str:
    more = f" and {len(paths) - _SHOWN_NAMES} more" if len(paths) > _SHOWN_NAMES else ""
    return ", ".join(paths[:_SHOWN_NAMES]) + more


def checked_workspace(payload: Any) -> dict[str, Any] | None:
    """A packed workspace from a system's process, checked as if the process lied: every
    path inside the workspace, every file text or base64. None when it is not one."""
    if payload is None:
        return None
    unreadable = {"files": [], "bytes": 0, "left_out": ["the workspace sent was malformed"]}
    if not isinstance(payload, Mapping) or not isinstance(payload.get("files"), list):
        return unreadable
    files = []
    try:
        for path, kind, content in payload["files"]:
            if kind not in ("text", "base64") or not isinstance(content, str):
                return unreadable
            files.append([inside_path(path), kind, content])
    except (TypeError, ValueError, WorkspacePathError):
        return unreadable
    left_out = payload.get("left_out")
    said = [str(item) for item in left_out] if isinstance(left_out, list) else []
    size = payload.get("bytes")
    return {"files": files, "bytes": size if isinstance(size, int) else 0, "left_out": said}


class WorkspaceCopy(os.PathLike[str]):
    """The workspace as the system left it, unpacked into a private temporary folder of
    the evaluator's process; removed when the copy is let go of. Usable as a path
    (`subprocess.run(..., cwd=case.workspace)`, `Path(case.workspace) / "app.py"`)."""

    def __init__(self, packed: Mapping[str, Any]) -> None:
        self.path = tempfile.mkdtemp(prefix="oloproof-workspace-copy-")
        self._removal = weakref.finalize(self, shutil.rmtree, self.path, True)
        self.left_out: tuple[str, ...] = tuple(packed.get("left_out") or ())
        """What the system's process did not pack (links, caches, files past the cap)."""
        self.files: tuple[str, ...] = tuple(path for path, _, _ in packed.get("files") or ())
        for path, kind, content in packed.get("files") or ():
            _write(self.path, inside_path(path), kind, content)

    def __fspath__(self) -> str:
        return self.path

    def remove(self) -> None:
        self._removal()

    def __repr__(self) -> str:
        return f"<workspace copy {self.path} ({len(self.files)} files)>"


def _write(root: str, path: str, kind: str, content: str) -> None:
    target = os.path.join(root, *path.split("/"))
    os.makedirs(os.path.dirname(target), exist_ok=True)
    data = content.encode("utf-8") if kind == "text" else base64.b64decode(content)
    with open(target, "wb") as handle:
        handle.write(data)
