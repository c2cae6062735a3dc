"""Asking for the other side's message before sleeping (`isolation._spin`): how long the
parent asks after a case of a given latency, and that asking loses no message and
still sleeps when none comes."""

from __future__ import annotations

import os
import select
import threading

from oloproof_core.execution.isolation._spin import (
    LONGEST_SPIN_S,
    SoonReader,
    poll_soon,
    spin_for,
)


def test_the_parent_asks_twice_a_quick_cases_latency_and_not_at_all_for_a_slow_one():
    assert spin_for(30e-6) == 60e-6
    assert spin_for(150e-6) == LONGEST_SPIN_S
    assert spin_for(0.002) == 0.0  # a 2 ms case: its reply is no nearer for asking


def test_a_message_is_found_whether_it_comes_while_asking_or_after():
    read_end, write_end = os.pipe()
    poller = select.poll()
    poller.register(read_end, select.POLLIN)
    try:
        assert poll_soon(poller, 0, 50e-6) == []  # nothing there, and no waiting asked
        os.write(write_end, b"x")
        assert poll_soon(poller, 1000, 50e-6) == [(read_end, select.POLLIN)]
        os.read(read_end, 1)
        # Written long after the asking gave up: found by the sleeping poll.
        timer = threading.Timer(0.05, os.write, (write_end, b"y"))
        timer.start()
        assert poll_soon(poller, 5000, 50e-6) == [(read_end, select.POLLIN)]
        timer.join()
    finally:
        os.close(read_end)
        os.close(write_end)


def test_a_reader_reads_what_comes_and_the_end_of_the_pipe():
    read_end, write_end = os.pipe()
    reader = SoonReader(read_end)
    try:
        os.write(write_end, b"case")
        assert reader.read(1 << 16) == b"case"
        os.close(write_end)
        assert reader.read(1 << 16) == b""  # the parent closed its end: no more cases
    finally:
        os.close(read_end)
