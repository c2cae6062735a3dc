"""When a growing pool adds processes: how fast it gets through its cases, how long a
process takes to start, and whether another doubling pays.

A growing pool starts one process and adds more, doubling, up to its bound, while the
cases still waiting would take longer at the current pace than two start-ups of a
process: a quick system's run ends before a second interpreter would be ready, and
starting it anyway would only take CPU from the first.
"""

from __future__ import annotations

import os


class Pace:
    """How fast a growing pool gets through its cases, and how long a process takes to start.

    The pace is measured over a window that starts afresh with each batch of cases and
    each time the pool has grown (once its new processes are ready); the pace before the
    last doubling outlives the batches.
    """

    START_UPS = 2.0
    """The pool doubles only while the cases waiting would take this many start-ups at
    the pace so far. With one start-up's worth left a doubling ends the run no sooner
    (the new processes help only once started), and a starting interpreter takes a CPU
    from the run's own loop and its store meanwhile."""

    GAIN = 1.5
    """Beyond one process per CPU, the pool doubles again only if its last doubling
    made it at least this much faster: past the CPUs, more processes help only a
    system that waits, and a quick one's cases are bound by this process's loop."""

    QUICK_CASE_S = 100e-6
    """A system that answers a case in less than this (the parent's clock) stays in one
    process: its pace is bound by this process's loop and the wake-ups between
    processes, which a second process only adds to. Measured on 2 CPUs, the parent's
    clock on each case: a system busy 50 µs a case took 69–73 µs a case in one process
    and 87 in two; busy 100 µs, 124 in one and 123–131 in two; busy 300 µs, 355 in one
    and 183–185 in two."""

    CHECK_EVERY_S = 0.0005
    """The pool asks `to_add` at most this often (`due`): a quick system answers many
    cases in that time and a process takes a hundred times as long to start, so asking
    after every case decided nothing sooner and cost the pool's loop on each."""

    def __init__(self) -> None:
        self.start_up_s = 0.0
        self.after_growth = False
        self._next_check = 0.0
        self._settled = 0
        self._case_s = 0.0
        self._since = 0.0
        self._rate_before: float | None = None

    def begin(self, now: float) -> None:
        """Measure the pace afresh from `now`: a new batch of cases, or a larger pool. The
        pace before the last doubling is kept, so a run that comes in batches does not
        double again past the CPUs with each batch when doubling did not pay."""
        self._settled = 0
        self._case_s = 0.0
        self._since = now

    def settle(self, case_s: float) -> None:
        """A case came back after `case_s` seconds in flight."""
        self._settled += 1
        self._case_s += case_s

    def due(self, now: float) -> bool:
        """Whether the pool should ask `to_add` at `now` (`CHECK_EVERY_S`)."""
        if now < self._next_check:
            return False
        self._next_check = now + self.CHECK_EVERY_S
        return True

    def ready(self, seconds: float) -> None:
        self.start_up_s = max(self.start_up_s, seconds)

    def to_add(
        self,
        now: float,
        waiting: int,
        oldest_in_flight_s: float,
        ready: int,
        slots: int,
        limit: int,
    ) -> int:
        """How many processes to start now, with `ready` of the pool's `slots` running
        (none is starting) and at most `limit` slots in all: as many again, or none."""
        if ready == 0 or slots >= limit:
            return 0
        if self.after_growth:
            # The smaller pool's pace over the whole time its new processes took to start,
            # not over the few cases before it grew (a cold process's first cases are slow,
            # so those made any later pace look like a doubling that paid).
            self._rate_before = self._rate(now)
            self.after_growth = False
            self.begin(now)  # the larger pool's pace, from now on
            return 0
        if not self.behind(waiting, now, oldest_in_flight_s, ready):
            return 0
        if not self.slow_system(oldest_in_flight_s):
            return 0
        if not self.worth_more(now, ready, os.cpu_count() or 1):
            return 0
        self.after_growth = True
        return min(ready, limit - slots)

    def behind(self, waiting: int, now: float, oldest_in_flight_s: float, ready: int) -> bool:
        """Whether `waiting` cases would take longer than `START_UPS` start-ups at the pace
        so far.

        The pace is the pool's throughput once it has run for a quarter of a start-up
        (sooner, a first slow case would stand for them all). A case in flight for a
        quarter of a start-up already stands for the pace whenever it says more, so a slow
        system is found slow while its first case still runs; a quicker one's time in
        flight, a fraction of a millisecond or a scheduling delay, must not decide for
        thousands of cases.
        """
        seconds_per_case = (now - self._since) / self._settled if self._measured(now) else 0.0
        if oldest_in_flight_s >= self.start_up_s / 4:
            seconds_per_case = max(seconds_per_case, oldest_in_flight_s / ready)
        return waiting * seconds_per_case > self.START_UPS * self.start_up_s

    def slow_system(self, oldest_in_flight_s: float) -> bool:
        """Whether the system's cases take long enough for more processes to help
        (`QUICK_CASE_S`), by the cases back so far or, as in `behind`, by one in flight
        for a quarter of a start-up (a moment's delay of a quick one says nothing)."""
        if not self._settled or oldest_in_flight_s >= max(self.QUICK_CASE_S, self.start_up_s / 4):
            return True
        return self._case_s / self._settled >= self.QUICK_CASE_S

    def worth_more(self, now: float, processes: int, cpus: int) -> bool:
        """Whether doubling `processes` may pay: below one per CPU it may; beyond, only
        if the last doubling sped the pool up by GAIN (and once that is measured)."""
        if processes < cpus or self._rate_before is None:
            return True
        if not self._measured(now) or self._rate_before == 0:
            return False
        return self._rate(now) >= self.GAIN * self._rate_before

    def _measured(self, now: float) -> bool:
        return self._settled > 0 and now - self._since >= self.start_up_s / 4

    def _rate(self, now: float) -> float:
        elapsed = now - self._since
        return self._settled / elapsed if elapsed > 0 else 0.0
