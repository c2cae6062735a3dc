"""A one-line progress bar on stderr for long runs."""

from __future__ import annotations

import sys
import time
from typing import TextIO


class ProgressBar:
    """Redraws one line at most ten times a second; silent until a phase takes over a second."""

    def __init__(self, stream: TextIO | None = None, *, enabled: bool | None = None) -> None:
        self.stream = stream or sys.stderr
        self.enabled = self.stream.isatty() if enabled is None else enabled
        self._phase = ""
        self._phase_started = 0.0
        self._last_draw = 0.0
        self._drawn = False

    def __call__(self, phase: str, done: int, total: int) -> None:
        if not self.enabled:
            return
        now = time.monotonic()
        if phase != self._phase:
            self._phase, self._phase_started = phase, now
        elapsed = now - self._phase_started
        finished = done >= total
        if elapsed < 1.0 and not (finished and self._drawn):
            return
        if not finished and now - self._last_draw < 0.1:
            return
        self._last_draw = now
        width = 30
        filled = int(width * done / total) if total else width
        rate = done / elapsed if elapsed > 0 else 0.0
        line = (
            f"\r{phase:<20.20} [{'#' * filled}{'.' * (width - filled)}] "
            f"{done:,}/{total:,}  {rate:,.0f}/s"
        )
        self.stream.write(line)
        self._drawn = True
        if finished:
            self.stream.write("\n")
            self._drawn = False
        self.stream.flush()
