"""A score metric's interval over missing cases from a column kept in a file (``Spill``).

:func:`_missing.completed_mean_interval` holds the column in reading order, a completion
of it and its bets: 24 bytes a case. Here the column stays in its file, in reading
order, NaN where missing; each pass of an end's search reads it a block at a time,
completes each block on the spot and reads the completion's bets from a file of their
own, written once per end. Memory is that of a few blocks at any size of run, and the
interval is the same to the last bit: the same values meet the same arithmetic in the
same order (``_blocks``).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator
from typing import Protocol

import numpy as np
import numpy.typing as npt

from ._blocks import bet_blocks, max_log_capital_of, pairwise_sum
from ._bounded_mean import SCORE_TUNING
from ._interval import Interval
from ._interval_end import confidence_set_end
from ._missing import check_range, unscale
from ._validate import check_confidence

__all__ = ["READ_BLOCK", "ColumnFile", "spilled_mean_interval"]

FloatArray = npt.NDArray[np.float64]

READ_BLOCK = 1 << 14
"""Values a pass reads from a file at once: each pass makes a few temporaries this long."""


class ColumnFile(Protocol):
    """A column of floats kept outside memory, read back in order or in parts."""

    def __len__(self) -> int: ...

    def blocks(self, size: int | None = ...) -> Iterator[npt.NDArray[np.generic]]: ...

    def read(self, start: int, count: int) -> npt.NDArray[np.generic]: ...

    def add_block(self, values: npt.NDArray[np.generic]) -> None: ...

    def close(self) -> None: ...


def spilled_mean_interval(
    column: ColumnFile,
    scratch: Callable[[], ColumnFile],
    low: float,
    high: float,
    confidence: float = 0.95,
) -> Interval:
    """:func:`completed_mean_interval` of `column` (every case's score in reading order,
    NaN where missing), read from its file; `scratch()` makes an empty file for bets.

    The caller checks the scores' range first: the error names a case by its place in
    the run, which the reading order does not know.
    """
    lo, hi = check_range(low, high)
    level = check_confidence(confidence)
    if len(column) == 0:
        return Interval(lo, hi)
    alpha = 1.0 - level
    lower = _end(_Completion(column, lo, hi, 0.0), scratch, 1.0, alpha)
    upper = _end(_Completion(column, lo, hi, 1.0), scratch, -1.0, alpha)
    return Interval(unscale(lower, lo, hi), unscale(upper, lo, hi))


def _end(
    completion: _Completion, scratch: Callable[[], ColumnFile], sign: float, alpha: float
) -> float:
    """One end, searched on its own side of the completion's mean (``Sample.end``)."""
    n = len(completion.column)
    bets_file = scratch()
    try:
        for bets in bet_blocks(completion.blocks(), alpha, n, SCORE_TUNING.prior_weight):
            bets_file.add_block(bets[0])

        def capital(m: FloatArray, among: npt.NDArray[np.intp]) -> FloatArray:
            pairs = zip(completion.blocks(), _rows(bets_file.blocks(READ_BLOCK)), strict=True)
            return max_log_capital_of(pairs, 1, m, sign, SCORE_TUNING.truncation)

        centre = min(1.0, max(0.0, pairwise_sum(completion.segment, n, READ_BLOCK) / n))
        edge = np.array([0.0 if sign > 0 else 1.0])
        threshold = math.log(2.0 / alpha)  # hedged: either side's capital reaching 2 / alpha
        return float(confidence_set_end(capital, threshold, edge, np.array([centre]))[0])
    finally:
        bets_file.close()


class _Completion:
    """The column rescaled onto [0, 1] with every missing score at `fill` (0: the worst
    completion, 1: the best), a block at a time, as `completed_mean_interval` makes it."""

    def __init__(self, column: ColumnFile, lo: float, hi: float, fill: float) -> None:
        self.column, self.lo, self.hi, self.fill = column, lo, hi, fill

    def of(self, raw: npt.NDArray[np.generic]) -> FloatArray:
        missing = np.isnan(raw)
        completed = np.where(missing, self.lo, raw).astype(np.float64, copy=False)
        completed -= self.lo
        completed /= self.hi - self.lo
        np.clip(completed, 0.0, 1.0, out=completed)
        if self.fill:
            completed[missing] = self.fill
        return completed

    def blocks(self) -> Iterator[FloatArray]:
        return (self.of(raw)[None, :] for raw in self.column.blocks(READ_BLOCK))

    def segment(self, start: int, count: int) -> FloatArray:
        return self.of(self.column.read(start, count))


def _rows(blocks: Iterator[npt.NDArray[np.generic]]) -> Iterator[FloatArray]:
    return (np.asarray(block, dtype=np.float64)[None, :] for block in blocks)
