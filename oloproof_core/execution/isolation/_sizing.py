"""How many processes, how many cases each, and how much memory, unless told otherwise.

Sync systems: one case per process, so `concurrency` processes when it is given and
otherwise up to min(16, 2 × CPUs) — threads default to 16 because they mostly wait, but
a process is a whole interpreter, and twice the CPUs keeps every core busy while some
processes wait on I/O. Without a given `concurrency` the pool starts one process and
grows to that bound only while the work outlasts starting another (see `_pool`).
Async systems: one case per process too, `concurrency` processes (16 by default, as
for threads; grown the same way when not given). Every system process can reach its
models, and a model call is charged to the case its process holds (docs/gateway.md),
so no process holds two cases at once: the concurrency of an async system is its
processes'.
"""

from __future__ import annotations

import os

DEFAULT_MEMORY_LIMIT_MB = 4096
"""Address space a system's process may take (RLIMIT_AS), in MiB."""
DEFAULT_CONCURRENCY = 16


def pool_shape(*, is_async: bool, concurrency: int | None) -> tuple[int, int]:
    """(processes, cases per process) for a system and the run's `concurrency`."""
    if is_async:
        return concurrency or DEFAULT_CONCURRENCY, 1
    if concurrency is not None:
        return concurrency, 1
    return min(DEFAULT_CONCURRENCY, 2 * (os.cpu_count() or 1)), 1
