"""Waiting for the other side's next message by asking a little before sleeping.

A quick system answers a case within tens of microseconds, and a process asleep in
`poll` or `read` takes about as long again to be woken and scheduled (longer in a
virtual machine, where waking another CPU goes through the hypervisor). With one case
in flight per process (the parent's clock around each, docs/isolation.md) those
wake-ups, two a case, were most of a quick case's time. So each side first asks
without sleeping, briefly, then sleeps as before. Nothing here changes what the
parent's clock covers: it still reads the time once the reply is readable.
"""

from __future__ import annotations

import os
import select
import time

_give_way = getattr(os, "sched_yield", lambda: None)  # where the platform has none

NEXT_CASE_SPIN_S = 50e-6
"""How long a system's process asks for its next case before sleeping: the parent sends
it as soon as it has read the last reply, before its own bookkeeping."""

LONGEST_SPIN_S = 200e-6
"""The parent asks for a reply at most this long; a system slower than that is not
asked for at all (its reply is no nearer for asking), so a slow case costs no CPU."""


def spin_for(latency_s: float) -> float:
    """How long the parent asks for a reply, the last case having taken `latency_s`."""
    return 0.0 if latency_s > LONGEST_SPIN_S else min(2 * latency_s, LONGEST_SPIN_S)


def poll_soon(poller: select.poll, timeout_ms: int, spin_s: float) -> list[tuple[int, int]]:
    """`poller.poll(timeout_ms)`, asking without sleeping for `spin_s` first."""
    if spin_s > 0 and timeout_ms != 0:
        clock = time.perf_counter
        give_up = clock() + spin_s
        while not (events := poller.poll(0)):
            if clock() >= give_up:
                break
            _give_way()
        else:
            return events
    return poller.poll(timeout_ms)


class SoonReader:
    """`os.read` of a blocking pipe end that asks for `NEXT_CASE_SPIN_S` before sleeping."""

    __slots__ = ("_fd", "_poller")

    def __init__(self, fd: int) -> None:
        self._fd = fd
        self._poller = select.poll()
        self._poller.register(fd, select.POLLIN)

    def read(self, size: int) -> bytes:
        poll_soon(self._poller, -1, NEXT_CASE_SPIN_S)
        return os.read(self._fd, size)
