"""The progress line of a long run, batches and all."""

from __future__ import annotations

import io

import pytest

from oloproof.cli import _progress
from oloproof.cli._progress import ProgressBar


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_a_run_in_batches_shows_its_progress_though_each_turn_of_a_phase_is_short(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    clock = Clock()
    monkeypatch.setattr(_progress.time, "monotonic", clock)
    stream = io.StringIO()
    bar = ProgressBar(stream, enabled=True)
    total = 10_000
    # Five batches of 2,000: the system's turn, then the evaluator's, 0.3 s each.
    for start in range(0, total, 2000):
        for phase in ("system", "judging exact"):
            for done in range(start + 500, start + 2001, 500):
                clock.now += 0.3 / 4
                bar(phase, done, total)
    lines = stream.getvalue()
    assert "system" in lines
    assert "judging exact" in lines
    assert "10,000/10,000" in lines
    assert lines.endswith("\n")
    # A shorter line never leaves the end of a longer one behind it: each redraw of the
    # line is at least as wide as the one it covers.
    for line in lines.split("\n"):
        widths = [len(part) for part in line.split("\r") if part]
        assert widths == sorted(widths)


def test_a_quick_run_draws_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    clock = Clock()
    monkeypatch.setattr(_progress.time, "monotonic", clock)
    stream = io.StringIO()
    bar = ProgressBar(stream, enabled=True)
    for done in range(1, 11):
        clock.now += 0.05
        bar("system", done, 10)
    assert stream.getvalue() == ""
