"""Reading long samples a block of columns at a time, with running sums carried over.

The betting methods pass over a sample dozens of times (every candidate mean an end's
search tries); each pass made several temporaries as long as the sample, 40 bytes a
case at a million cases. Read in blocks, a pass's memory is that of a block.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Iterator

import numpy as np
import numpy.typing as npt

__all__ = [
    "BLOCK_VALUES",
    "bet_blocks",
    "blocks",
    "carried_cumsum",
    "max_log_capital_of",
    "pairwise_sum",
]

FloatArray = npt.NDArray[np.float64]

BLOCK_VALUES = 1 << 16
"""Values a pass over long samples reads at once (half a megabyte per temporary): a million-case
sample is read in sixteen blocks, and the passes' memory stays that of a block."""


def blocks(x: FloatArray) -> Iterator[slice]:
    """Column blocks of `x` covering `BLOCK_VALUES` values each (at least one column).

    Running sums carried from one block into the next add in the same order as one
    `cumsum` over the whole row, so the figures are the same to the last bit.
    """
    rows, n = x.shape
    width = max(1, BLOCK_VALUES // max(rows, 1))
    return (slice(start, start + width) for start in range(0, n, width))


def carried_cumsum(values: FloatArray, carried: FloatArray) -> FloatArray:
    """`cumsum` along rows of a block, continuing the sums `carried` from the blocks before."""
    summed = np.array(values, dtype=np.float64)
    summed[:, 0] += carried
    result: FloatArray = np.cumsum(summed, axis=1, out=summed)
    return result


def bet_blocks(
    x_blocks: Iterable[FloatArray], alpha: float, horizon: int, prior_weight: float
) -> Iterator[FloatArray]:
    """Predictable bets for blocks of columns read in order, one block of bets per block.

    The plug-in bets of ``_bounded_mean.plug_in_bets``, whose running mean and variance
    are carried from block to block: the bets of a sample read from a file come out
    the same as those of the sample held whole.
    """
    scale = 2.0 * math.log(2.0 / alpha)
    w = prior_weight
    total = squares = s2_last = None
    start = 0
    for values in x_blocks:
        if total is None or squares is None or s2_last is None:
            rows = values.shape[0]
            # A prior pseudo-observation with mean 1/2 and variance 1/4 keeps the
            # first bets finite and moderate.
            total, squares, s2_last = np.zeros(rows), np.zeros(rows), np.full(rows, 0.25)
        t = np.arange(start + 1, start + values.shape[1] + 1, dtype=np.float64)
        running = carried_cumsum(values, total)
        mu = (0.5 * w + running) / (t + w)
        spread = carried_cumsum((values - mu) ** 2, squares)
        s2 = (0.25 * w + spread) / (t + w)
        s2_prev = np.concatenate((s2_last[:, None], s2[:, :-1]), axis=1)
        yield np.sqrt(scale / (max(horizon, 1) * s2_prev))
        total, squares, s2_last = running[:, -1], spread[:, -1], s2[:, -1]
        start += values.shape[1]


def max_log_capital_of(
    pairs: Iterable[tuple[FloatArray, FloatArray]],
    rows: int,
    m: FloatArray,
    sign: float,
    truncation: float,
) -> FloatArray:
    """Per row: ``max_t log K_t^{sign}(m)`` over blocks of (values, bets) read in order."""
    gap = m if sign > 0 else 1.0 - m
    # gap == 0 needs no truncation: every factor is then at least 1. A
    # subnormal gap overflows to an infinite cap, which is the same limit.
    cap = np.full_like(gap, np.inf)
    with np.errstate(over="ignore"):
        np.divide(truncation, gap, out=cap, where=gap > 0.0)
    best = np.full(rows, -np.inf)
    carried = np.zeros(rows)
    for values, bets in pairs:
        factors = 1.0 + sign * np.minimum(bets, cap[:, None]) * (values - m[:, None])
        log_capital = carried_cumsum(np.log(factors), carried)
        best = np.maximum(best, log_capital.max(axis=1))
        carried = log_capital[:, -1]
    return best


def pairwise_sum(
    segment: Callable[[int, int], FloatArray], n: int, block: int = BLOCK_VALUES
) -> float:
    """NumPy's sum of ``n`` values, to the last bit, reading `segment(start, count)`
    (at most `block` values at a time, or 128) instead of holding them all.

    NumPy sums a contiguous row pairwise: halves, the first a multiple of 8 long,
    until a part is short enough to sum directly; a part is summed the same way
    wherever it lies. Splitting as NumPy does and summing each short part with
    NumPy gives the same additions in the same order.
    """
    # NumPy sums up to 128 values in one loop of eight sums: never split those.
    direct = max(block, 128)

    def summed(start: int, count: int) -> float:
        if count <= direct:
            return float(np.add.reduce(segment(start, count)))
        half = count // 2
        half -= half % 8
        return summed(start, half) + summed(start + half, count - half)

    return summed(0, n)
