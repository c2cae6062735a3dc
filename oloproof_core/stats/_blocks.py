"""Reading long samples a block of columns at a time, with running sums carried over.

The betting methods pass over a sample dozens of times (every candidate mean an end's
search tries); each pass made several temporaries as long as the sample, 40 bytes a
case at a million cases. Read in blocks, a pass's memory is that of a block.
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import numpy.typing as npt

__all__ = ["BLOCK_VALUES", "blocks", "carried_cumsum"]

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
