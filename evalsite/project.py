"""Which project a process works in, and so which data folder (store) it uses.

Every face (the `oloproof` command, `evaluate()`, pytest, notebooks, `serve`,
`worker`) finds the same data folder from wherever inside a project it starts:

1. `OLOPROOF_DATA_DIR`, when set, names the data folder outright;
2. otherwise the nearest folder, from the working directory upward, that already
   holds a `.oloproof/` folder: that store is used;
3. otherwise the nearest folder upward that is a project root (`pyproject.toml`,
   `.git`, `setup.py` or `setup.cfg`); its `.oloproof/` is used (made on first use);
4. otherwise the nearest folder upward holding an `oloproof.yaml`;
5. otherwise `./.oloproof` in the working directory.

So a project with its configs in subfolders keeps one store at its root, whichever
folder a command starts in.

Standard library only: the settings read it before anything else is set up.
"""

from __future__ import annotations

import os
from pathlib import Path

DATA_FOLDER_NAME = ".oloproof"
PROJECT_MARKERS = ("pyproject.toml", ".git", "setup.py", "setup.cfg")
"""Files or folders whose presence makes a folder a project root."""
CONFIG_MARKER = "oloproof.yaml"
"""A run config: a project root only when no folder above is one by the markers."""


def _upward(start: Path) -> list[Path]:
    return [start, *start.parents]


def project_root(start: str | os.PathLike[str] | None = None) -> Path | None:
    """The project `start` (default: the working directory) lies in, or None if none is found.

    An existing store wins over a marker, so a project whose store was made before a
    `pyproject.toml` was added keeps it; a project marker wins over a config file.
    """
    here = Path(start if start is not None else os.getcwd()).expanduser().resolve()
    folders = _upward(here)
    for folder in folders:
        if (folder / DATA_FOLDER_NAME).is_dir():
            return folder
    for folder in folders:
        if any((folder / marker).exists() for marker in PROJECT_MARKERS):
            return folder
    for folder in folders:
        if (folder / CONFIG_MARKER).is_file():
            return folder
    return None


def data_dir(start: str | os.PathLike[str] | None = None) -> Path:
    """The data folder (SQLite store, broker, secret key) for a process started in `start`."""
    configured = os.environ.get("OLOPROOF_DATA_DIR")
    if configured:
        return Path(configured).expanduser().resolve()
    root = project_root(start)
    base = root if root is not None else Path(start or os.getcwd()).resolve()
    return base / DATA_FOLDER_NAME


def data_dir_reason(start: str | os.PathLike[str] | None = None) -> str:
    """Why this data folder was chosen, in words a person can act on."""
    if os.environ.get("OLOPROOF_DATA_DIR"):
        return "set by OLOPROOF_DATA_DIR"
    root = project_root(start)
    if root is None:
        return "no project root found above the working directory"
    return f"the project at {root}"
