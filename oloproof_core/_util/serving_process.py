"""Starting a process of ours that serves requests over two pipes.

A system's process (`oloproof_core.execution.isolation._child`) and the local store's process
(`oloproof._store_server`) start alike: `python -m MODULE READ_FD WRITE_FD`, given only
their two pipe ends.
"""

from __future__ import annotations

import os
import select
import subprocess
import sys
import time
from collections.abc import Callable, Mapping
from typing import Any


def start_serving_process(
    module: str,
    environment: Mapping[str, str],
    wrap: Callable[[list[str]], list[str]] | None = None,
) -> tuple[subprocess.Popen[bytes], int, int]:
    """Start `module` serving; return it with this process's pipe ends to it and from it.

    Its stdin is closed and its stdout goes to this process's stderr (stdout may carry a
    JSON document, `--json -`). It has a process group of its own from the start: a
    terminal's Ctrl-C is this process's to handle, and would otherwise interrupt a child
    still importing, traceback and all; each such process ends with this one otherwise
    (the pipe closes, or it asks to die with its parent). `wrap` turns the command into
    the one to run (a sandbox's).
    """
    its_read, to_it = os.pipe()
    from_it, its_write = os.pipe()
    try:
        command = [sys.executable, "-m", module, str(its_read), str(its_write)]
        popen = subprocess.Popen(
            command if wrap is None else wrap(command),
            pass_fds=(its_read, its_write),
            env=dict(environment),
            stdin=subprocess.DEVNULL,
            stdout=sys.stderr.fileno() if _has_fileno(sys.stderr) else None,
            process_group=0,
        )
    except BaseException:
        for fd in (to_it, from_it):
            os.close(fd)
        raise
    finally:
        os.close(its_read)
        os.close(its_write)
    return popen, to_it, from_it


def _has_fileno(stream: Any) -> bool:
    try:
        stream.fileno()
    except (AttributeError, OSError, ValueError):  # a notebook's stream has no descriptor
        return False
    return True


def wait_for_exit(pid: int, seconds: float, ended: Callable[[], bool]) -> bool:
    """Wait at most `seconds` for process `pid` to end; `ended()` says whether it has (and
    reaps it). Woken by the kernel the moment it ends (a pidfd), where `Popen.wait`'s
    timeout sleeps in steps that double up to 50 ms: a process ending in 10 ms was waited
    for 15, one ending in 35 ms for 64, at the end of every command that records."""
    if ended():
        return True
    try:
        handle = os.pidfd_open(pid)
    except (AttributeError, OSError):  # not Linux, or a kernel before 5.3
        deadline = time.monotonic() + seconds
        while not ended() and time.monotonic() < deadline:
            time.sleep(0.002)
        return ended()
    try:
        select.select([handle], [], [], seconds)
    finally:
        os.close(handle)
    return ended()
