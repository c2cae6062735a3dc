"""A row's workspace files: `input.files` ({"path": "text"}) or `input.files_from` (a
folder beside the dataset), checked where the row is read.

Every path must stay inside the workspace: relative, with no `..` part. A row whose
files break a rule does not stop the dataset: its case alone is missing, with the
file, the line and what to change (`Row.refused`), and the other cases run.

`files_from` is read here, in the process that loads the dataset, and its files are put
into `input.files`: the system's process cannot read the dataset's folder, and the
input's digest (hence the verdict cache) then covers what the workspace is seeded with.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from oloproof_core.errors import DatasetError

FILES_KEY = "files"
FOLDER_KEY = "files_from"
MAX_FILES = 2_000
MAX_FOLDER_BYTES = 8 * 2**20
"""What `files_from` may put into one row's input: larger trees belong in the system."""


class WorkspacePathError(ValueError):
    """A workspace path that is not a relative path inside the workspace."""


def has_workspace(case_input: Any) -> bool:
    """Whether a case's input carries files for a workspace (`files` as an object)."""
    return type(case_input) is dict and type(case_input.get(FILES_KEY)) is dict


def inside_path(path: Any) -> str:
    """`path` as a clean relative path inside the workspace (`./a//b` → `a/b`), or a
    WorkspacePathError saying what is wrong and how to write it."""
    if not isinstance(path, str) or not path.strip():
        raise WorkspacePathError(f"the path {path!r} is not a file name; write e.g. 'app.py'")
    if "\x00" in path or "\\" in path:
        raise WorkspacePathError(f"the path {path!r} holds a NUL or a backslash; use '/'")
    if path.startswith("/") or (len(path) > 1 and path[1] == ":"):
        raise WorkspacePathError(
            f"the path {path!r} is absolute; write it relative to the workspace, e.g. 'src/app.py'"
        )
    parts = [part for part in path.split("/") if part not in ("", ".")]
    if ".." in parts:
        raise WorkspacePathError(
            f"the path {path!r} leaves the workspace ('..'); every file must lie inside it: "
            "write it relative to the workspace, without '..'"
        )
    if not parts:
        raise WorkspacePathError(f"the path {path!r} names no file; write e.g. 'app.py'")
    return "/".join(parts)


def workspace_input(
    source: str, line: int | None, row_id: str, case_input: dict[str, Any]
) -> tuple[dict[str, Any], str | None]:
    """The row's input with `files_from` read into `files`, and why its case must be
    missing (its file and line), or None. A row without either key is returned as is."""
    try:
        return _read_workspace(source, case_input), None
    except (WorkspacePathError, _FolderError) as exc:
        said = f"row {row_id!r}: input.{exc.args[1] if len(exc.args) > 1 else FILES_KEY}: "
        return case_input, str(DatasetError(source, line, said + str(exc.args[0])))


class _FolderError(ValueError):
    """`files_from` names a folder that cannot be read."""


def _read_workspace(source: str, case_input: dict[str, Any]) -> dict[str, Any]:
    files = case_input.get(FILES_KEY)
    if FOLDER_KEY not in case_input:
        _check_files(files)
        return case_input
    folder_files = _folder_files(source, case_input[FOLDER_KEY])
    if isinstance(files, Mapping):
        _check_files(files)
        folder_files.update({inside_path(path): text for path, text in files.items()})
    elif files is not None:
        raise _FolderError("'files' beside 'files_from' must be an object of texts", FILES_KEY)
    kept = {key: value for key, value in case_input.items() if key != FOLDER_KEY}
    return {**kept, FILES_KEY: dict(sorted(folder_files.items()))}


def _check_files(files: Any) -> None:
    if not isinstance(files, Mapping):
        return  # not a workspace: `files` of another shape is the system's own input
    if len(files) > MAX_FILES:
        raise WorkspacePathError(f"{len(files):,} files, over the {MAX_FILES:,} a workspace takes")
    kept = {inside_path(path) for path in files}
    for path in kept:
        folder = path.rpartition("/")[0]
        while folder:
            if folder in kept:
                raise WorkspacePathError(
                    f"{folder!r} is a file and the folder of {path!r}; rename one of them"
                )
            folder = folder.rpartition("/")[0]
    for path, text in files.items():
        if not isinstance(text, str):
            raise WorkspacePathError(
                f"the file {path!r} holds {type(text).__name__}; a file's content is its "
                'text, e.g. {"app.py": "def add(a, b):\\n    return a + b\\n"}'
            )


def _folder_files(source: str, folder: Any) -> dict[str, str]:
    try:
        relative = inside_path(folder)
    except WorkspacePathError as exc:
        raise _FolderError(str(exc).replace("the path", "the folder"), FOLDER_KEY) from None
    base = os.path.dirname(os.path.abspath(source)) if source != "<list>" else os.getcwd()
    root = os.path.join(base, relative)
    if not os.path.isdir(root) or os.path.islink(root):
        raise _FolderError(
            f"no folder {relative!r} beside the dataset (looked in {base})", FOLDER_KEY
        )
    files: dict[str, str] = {}
    total = 0
    for here, folders, names in os.walk(root):
        folders[:] = sorted(name for name in folders if name != "__pycache__")
        for name in sorted(names):
            path = os.path.join(here, name)
            if os.path.islink(path) or not os.path.isfile(path):
                continue  # links are not followed: a workspace holds the folder's own files
            shown = os.path.relpath(path, root).replace(os.sep, "/")
            text = _text_of(path, shown)
            total += len(text.encode("utf-8"))
            if len(files) >= MAX_FILES or total > MAX_FOLDER_BYTES:
                raise _FolderError(
                    f"the folder {relative!r} holds more than {MAX_FILES:,} files or "
                    f"{MAX_FOLDER_BYTES // 2**20} MiB of text; a workspace is seeded with less",
                    FOLDER_KEY,
                )
            files[shown] = text
    return files


def _text_of(path: str, shown: str) -> str:
    try:
        with open(path, encoding="utf-8") as handle:
            text = handle.read()
    except UnicodeDecodeError:
        raise _FolderError(
            f"the file {shown!r} is not UTF-8 text; a workspace is seeded with text files",
            FOLDER_KEY,
        ) from None
    except OSError as exc:
        raise _FolderError(
            f"the file {shown!r} cannot be read: {exc.strerror}", FOLDER_KEY
        ) from None
    if "\x00" in text:
        raise _FolderError(f"the file {shown!r} holds NUL characters: not text", FOLDER_KEY)
    return text
