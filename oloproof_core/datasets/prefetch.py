"""A run config's dataset file read beside the declaring of its code.

`oloproof run` knows the dataset's path as soon as it has read the config, but first
waits for the system's process to start in its sandbox and declare the system (a
tenth of a second and more, the parent idle in `poll`). The file is read and checked
in a thread meanwhile; the run's `load_dataset` of that path takes the result, or the
error, as if it had read the file itself then. The file is read again when it changed
since (its size, modification time or inode), and a prefetch nobody takes is dropped
with the process: a config that fails leaves nothing behind.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING

from oloproof_core._util.gc_tuning import fewer_collections

if TYPE_CHECKING:
    from oloproof_core.datasets.rows import Dataset

Load = Callable[[str], "Dataset"]

_lock = threading.Lock()
_pending: dict[str, _Prefetch] = {}


def _identity(path: str) -> tuple[int, int, int] | None:
    try:
        found = os.stat(path)
    except OSError:
        return None
    return found.st_size, found.st_mtime_ns, found.st_ino


class _Prefetch:
    def __init__(self, path: str, load: Load) -> None:
        self.path = path  # as the run names it: its errors and provenance say it so
        self.load = load
        self.identity = _identity(path)
        self.dataset: Dataset | None = None
        self.error: BaseException | None = None
        self.thread = threading.Thread(
            target=self._load, name="oloproof-dataset-prefetch", daemon=True
        )

    def _load(self) -> None:
        try:
            # As the run's own read does: a large file's rows, scanned again and again
            # by the collector as they pile up, took a sixth longer to read.
            with fewer_collections():
                self.dataset = self.load(self.path)
        except BaseException as exc:  # handed to the run, which says it as it would have
            self.error = exc


def prefetch_dataset(path: str | os.PathLike[str], load: Load) -> None:
    """Start reading the dataset file at `path` with `load` (`load_dataset`) in a thread
    (see the module docstring)."""
    key = os.path.abspath(path)
    if not os.path.isfile(key):
        return  # the run's own read says what is wrong with it
    prefetch = _Prefetch(os.fspath(path), load)
    with _lock:
        if key in _pending:
            return
        _pending[key] = prefetch
    prefetch.thread.start()


def take_prefetched(path: str | os.PathLike[str]) -> Dataset | None:
    """The dataset read from `path` ahead of time, or None when there is none (or the
    file changed since); raises the error its reading met."""
    key = os.path.abspath(path)
    with _lock:
        prefetch = _pending.get(key)
        if prefetch is None or prefetch.thread is threading.current_thread():
            return None  # none, or this is its own reading
        del _pending[key]
    prefetch.thread.join()
    if prefetch.path != os.fspath(path) or prefetch.identity != _identity(prefetch.path):
        return None
    if prefetch.error is not None:
        raise prefetch.error
    return prefetch.dataset
