"""The heartbeat of an optimization at work: `touched_at` kept fresh by a thread.

A worker beats for the optimization it claimed; a process that runs one itself
(`optimize()`, `oloproof optimize` without --submit) beats for the one it began. A
heartbeat older than the stale interval means that process is gone: the sweep hands a
submitted optimization to another worker, and fails one that was run in a process of
its own, saying so (runs.workers.optimization_work).
"""

from __future__ import annotations

import logging
import threading

from django.db import close_old_connections

from runs.workers.dispatch import stale_after
from runs.writers.optimization_records import optimization_touch

logger = logging.getLogger(__name__)


class Heartbeat:
    """Touches the claim every third of the stale interval until stopped."""

    def __init__(self, optimization_id: int, worker: str) -> None:
        self.optimization_id, self.worker = optimization_id, worker
        self._stop = threading.Event()
        self._thread = threading.Thread(
            target=self._loop, daemon=True, name=f"optimization-{optimization_id}-heartbeat"
        )

    def start(self) -> Heartbeat:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        if self._thread.is_alive() and self._thread is not threading.current_thread():
            self._thread.join(5)

    def __enter__(self) -> Heartbeat:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def _loop(self) -> None:
        interval = max(0.2, stale_after().total_seconds() / 3)
        while not self._stop.wait(interval):
            try:
                optimization_touch(optimization_id=self.optimization_id, worker=self.worker)
            except Exception:
                logger.exception("heartbeat of optimization %s failed", self.optimization_id)
            finally:
                close_old_connections()
