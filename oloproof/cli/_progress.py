"""A one-line progress bar on stderr for long runs."""

from __future__ import annotations

import sys
import time
from typing import TextIO


class ProgressBar:
    """Redraws one line at most ten times a second; silent until a phase takes over a second.

    A run that records as it goes alternates its phases batch by batch (the system, then
    each evaluator), so each phase is timed from the first time it was seen, not from its
    latest turn: the line then shows the whole run's progress and rate.
    """

    def __init__(self, stream: TextIO | None = None, *, enabled: bool | None = None) -> None:
        self.stream = stream or sys.stderr
        self.enabled = self.stream.isatty() if enabled is None else enabled
        self._phase_started: dict[str, float] = {}
        self._last_draw = 0.0
        self._drawn = 0

    def __call__(self, phase: str, done: int, total: int) -> None:
        if not self.enabled:
            return
        now = time.monotonic()
        elapsed = now - self._phase_started.setdefault(phase, now)
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
        # Padded over a longer line drawn before, which another phase may have left.
        self.stream.write(line.ljust(self._drawn))
        self._drawn = len(line)
        if finished:
            self.stream.write("\n")
            self._drawn = 0
        self.stream.flush()
