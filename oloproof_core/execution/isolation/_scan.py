"""What a sandbox must cover inside the code folders it binds: oloproof's own files.

A code folder (a folder on `sys.path`, the project) may hold what oloproof wrote there
before: a store (`.oloproof/`, of this project or another, from this run or an earlier
one) and result files (`oloproof run --json out.json`), both full of answers and
figures. The run's own dataset and store are hidden by name; these are found by one
bounded walk of each code folder, once per pool:

- a folder named `.oloproof`, or a folder holding `oloproof.sqlite3` (a store placed by
  `OLOPROOF_DATA_DIR`, with its broker and secret key beside it), each as one (a
  store's journal comes and goes while it writes, and a file to be covered that is gone
  when the sandbox starts would fail the sandbox);
- a `.json` file whose first bytes are a result's (`results.head.looks_like_result`).

The walk does not follow links (a link's target is covered where it is bound), and
skips Python environments (their own bind, never scanned), version control folders,
`node_modules` and `__pycache__`. With `closed=True` (root's code in a folder other
users cannot enter, `_sandbox`) it also lists every file or folder that a user other
than its owner could not read (a folder whose entries all are, as the folder), and then
walks version control folders too.

A folder holding more than `limit` entries is not walked to its end: `complete` says
so, and the sandbox refuses to bind it rather than hide part of what it must.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

STORE_FOLDER = ".oloproof"
STORE_FILES = (
    "oloproof.sqlite3",
    "oloproof.sqlite3-journal",
    "oloproof.sqlite3-wal",
    "oloproof.sqlite3-shm",
    "secret_key",
    "broker",
)
"""What a store folder holds that a system must not read, where the folder is not one
to hide whole (`OLOPROOF_DATA_DIR` may name a folder that holds more)."""
_SKIPPED = frozenset({".git", ".hg", ".svn", "node_modules", "__pycache__"})
_ALWAYS_SKIPPED = frozenset({"__pycache__"})


@dataclass
class FolderScan:
    """What one walk of a code folder found (see the module docstring)."""

    stores: list[str] = field(default_factory=list)
    results: list[str] = field(default_factory=list)
    closed: list[str] = field(default_factory=list)
    entries: int = 0
    complete: bool = True


def scan_folder(
    root: str, *, skip: Iterable[str] = (), limit: int, closed: bool = False
) -> FolderScan:
    """Walk `root` (a real path, no link in it) for oloproof's stores and result files;
    `skip`: folders not to enter (Python environments)."""
    from oloproof_core.results.head import RESULT_HEAD_BYTES, looks_like_result

    found = FolderScan()
    skipped, names_skipped = set(skip), (_ALWAYS_SKIPPED if closed else _SKIPPED)
    folders = [root]
    while folders:
        folder = folders.pop()
        try:
            entries = list(os.scandir(folder))
        except OSError:
            continue
        if folder != root and any(entry.name == STORE_FILES[0] for entry in entries):
            found.stores.append(folder)  # as one: its journal comes and goes (module doc)
            continue
        closed_before = len(found.closed)
        for entry in entries:
            found.entries += 1
            if found.entries > limit:
                found.complete = False
                return found
            try:
                is_link = entry.is_symlink()
                is_folder = not is_link and entry.is_dir(follow_symlinks=False)
                if closed and not is_link and _closed(entry.stat(follow_symlinks=False)):
                    found.closed.append(entry.path)
                    continue
            except OSError:
                continue
            if is_folder:
                if entry.name == STORE_FOLDER:
                    found.stores.append(entry.path)
                elif (
                    entry.name not in names_skipped
                    and entry.path not in skipped
                    and not os.path.exists(os.path.join(entry.path, "pyvenv.cfg"))
                ):
                    folders.append(entry.path)
            elif (
                not is_link
                and entry.name.lower().endswith(".json")
                and _starts_like_result(entry.path, RESULT_HEAD_BYTES, looks_like_result)
            ):
                found.results.append(entry.path)
        _fold_closed(found, folder, root, len(entries), closed_before)
    return found


def _fold_closed(found: FolderScan, folder: str, root: str, entries: int, before: int) -> None:
    """A folder all of whose entries are closed is covered as one: the same files hidden
    with one mount rather than one each (a test database of 500 private files made a
    sandbox's start take half a second more)."""
    if folder != root and entries > 1 and len(found.closed) - before == entries:
        del found.closed[before:]
        found.closed.append(folder)


def _closed(status: os.stat_result) -> bool:
    """Whether a user other than the owner (and not in its group) could not read it."""
    mode = status.st_mode
    if stat.S_ISDIR(mode):
        wanted = stat.S_IROTH | stat.S_IXOTH
    elif stat.S_ISSOCK(mode):
        wanted = stat.S_IWOTH
    else:
        wanted = stat.S_IROTH
    return mode & wanted != wanted


def _starts_like_result(path: str, size: int, looks_like_result: Callable[[bytes], bool]) -> bool:
    try:
        with open(path, "rb") as handle:
            head = handle.read(size)
    except OSError:
        return False
    return looks_like_result(head)
