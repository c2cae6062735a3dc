"""Ending a process of ours (the command, a system's process) without the interpreter's
teardown.

The teardown frees, one by one, every object that Django, NumPy and the run loaded and
collects over them once more: a tenth to a fifth of a second of every command here,
more than the cases of a small run. What user code in this process (evaluators,
metric files) may count on at exit is done first, in the interpreter's own order: the
`atexit` handlers (the user's, logging's flush, `weakref.finalize`), then every open
file's buffer, then the standard streams. While another non-daemon thread runs, the
ordinary exit is kept, since the interpreter would wait for it. What is skipped is the
`__del__` of objects still alive at exit, which Python does not promise to call
either (the data model's note on `object.__del__`).
"""

from __future__ import annotations

import atexit
import gc
import io
import itertools
import os
import sys
import threading
from typing import NoReturn

__all__ = ["end_process"]

# The buffered kinds `open()` returns; compared by exact type so that finding them
# among every object stays in C (a proxy's `__class__` is never asked for).
_BUFFERED_FILES = frozenset({io.TextIOWrapper, io.BufferedWriter, io.BufferedRandom})


def end_process(code: int, *, user_code: bool = True) -> NoReturn:
    """Exit with `code` once the exit work user code relies on has been done.

    `user_code=False` for a process that ran none (the local store's): its files are
    flushed by their owners, so the search for open files among every object (20 ms
    where Django is loaded) is skipped.
    """
    if _other_threads_running():
        sys.exit(code)
    atexit._run_exitfuncs()
    if user_code:
        _flush_open_files()
    for stream in (sys.stdout, sys.stderr):
        _flush(stream)
    os._exit(code)


def _other_threads_running() -> bool:
    main = threading.main_thread()
    return any(t is not main and not t.daemon and t.is_alive() for t in threading.enumerate())


def _flush_open_files() -> None:
    objects = gc.get_objects()
    kinds = map(_BUFFERED_FILES.__contains__, map(type, objects))
    for handle in itertools.compress(objects, kinds):
        _flush(handle)


def _flush(handle: object) -> None:
    try:
        if not handle.closed and handle.writable():  # type: ignore[attr-defined]
            handle.flush()  # type: ignore[attr-defined]
    except (OSError, ValueError):
        pass  # a closed pipe or a detached buffer: the interpreter would drop it too
