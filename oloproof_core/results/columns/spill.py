"""Columns too long to hold: values appended to a temporary file, read back a block at a time.

Concluding a run of a million cases passes over each metric's values dozens of times
(every candidate mean an interval's end search tries). Held in memory, the values cost
8 bytes a case and metric, and the process grows with the run. Written to a temporary
file as the rows stream by, they cost one block; each pass reads the file a block at a
time, from the operating system's cache while it has room.
"""

from __future__ import annotations

import math
import tempfile
from array import array
from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

__all__ = ["SPILL_BLOCK", "ExactSum", "Spill"]

SPILL_BLOCK = 1 << 14
"""Values held before they go to the file, and read back at once: 128 KB of floats. A pass
makes a few temporaries a block long, and holds two blocks while it moves on from one to
the next; short blocks keep that well under the rest of a conclusion's memory."""

_KINDS = {"d": "<f8", "i": "<i4"}
"""The `array` codes a spill holds and the little-endian types its file stores them as."""


class Spill:
    """An append-only column of floats ("d") or 32-bit integers ("i") in a temporary file.

    The file is removed when the spill is closed or collected. Reading flushes what is
    pending, so a spill may be read between appends.
    """

    __slots__ = ("_code", "_file", "_length", "_pending")

    def __init__(self, code: str = "d") -> None:
        if code not in _KINDS:
            raise ValueError(f"a spill holds floats ('d') or integers ('i'), not {code!r}")
        self._code = code
        self._pending: array[float] | array[int] = array(code)
        # Open for the spill's life, closed by `close` or when collected.
        self._file = tempfile.TemporaryFile(prefix="oloproof-column-")  # noqa: SIM115
        self._length = 0

    def append(self, value: float) -> None:
        self._pending.append(value)  # type: ignore[arg-type]
        self._length += 1
        if len(self._pending) >= SPILL_BLOCK:
            self._flush()

    def extend(self, values: Iterable[float]) -> None:
        for value in values:
            self.append(value)

    def repeat(self, value: float, count: int) -> None:
        """`count` copies of `value` (a column first seen late is missing until then)."""
        while count > 0:
            step = min(count, SPILL_BLOCK)
            self._pending.extend(array(self._code, [value]) * step)  # type: ignore[arg-type]
            self._length += step
            count -= step
            self._flush()

    def add_block(self, values: npt.NDArray[np.generic]) -> None:
        """A block of values at once, written as it is rather than one by one."""
        import numpy as np

        self._flush()
        self._file.seek(0, 2)
        self._file.write(np.ascontiguousarray(values, dtype=_KINDS[self._code]).tobytes())
        self._length += int(values.size)

    def __len__(self) -> int:
        return self._length

    def _flush(self) -> None:
        if self._pending:
            self._file.seek(0, 2)
            self._file.write(self._little_endian(self._pending))
            self._pending = array(self._code)

    @staticmethod
    def _little_endian(values: array[float] | array[int]) -> bytes:
        import sys

        if sys.byteorder == "little":
            return values.tobytes()
        swapped = array(values.typecode, values)
        swapped.byteswap()
        return swapped.tobytes()

    def blocks(self, size: int | None = None) -> Iterator[npt.NDArray[np.generic]]:
        """The column in order, `size` values at a time (`SPILL_BLOCK`), as native arrays."""
        size = size or SPILL_BLOCK
        for start in range(0, self._length, size):
            yield self.read(start, min(size, self._length - start))

    def read(self, start: int, count: int) -> npt.NDArray[np.generic]:
        """`count` values from place `start` on (fewer past the end)."""
        import numpy as np

        self._flush()
        kind = np.dtype(_KINDS[self._code])
        self._file.seek(start * kind.itemsize)
        found = np.frombuffer(self._file.read(count * kind.itemsize), dtype=kind)
        return found.astype(kind.newbyteorder("="), copy=False)

    def byte_parts(self, size: int | None = None) -> Iterator[bytes]:
        """The file's bytes (little-endian values) in parts of at most `size` values
        (a block)."""
        size = size or SPILL_BLOCK
        self._flush()
        itemsize = array(self._code).itemsize
        self._file.seek(0)
        while part := self._file.read(size * itemsize):
            yield part

    @property
    def nbytes(self) -> int:
        """The column's size in its file."""
        return self._length * array(self._code).itemsize

    def whole(self) -> npt.NDArray[np.generic]:
        """The whole column in memory: for the readers that need every value at once."""
        import numpy as np

        found = list(self.blocks())
        if not found:
            return np.empty(0, dtype=np.dtype(_KINDS[self._code]).newbyteorder("="))
        return found[0].copy() if len(found) == 1 else np.concatenate(found)

    def close(self) -> None:
        self._file.close()


class ExactSum:
    """`math.fsum` of values given a block at a time, to the same last bit.

    The sum so far is carried as a few floats whose exact total is the exact sum: each
    block's values and those floats are summed again exactly (`math.fsum` rounds the
    exact sum once), and the rounding's remainder is kept as the next float, until none
    is left. Rounding their total once at the end rounds the exact sum once, as one
    `fsum` over every value does.
    """

    __slots__ = ("_terms",)

    def __init__(self) -> None:
        self._terms: list[float] = []

    def add(self, values: list[float]) -> None:
        together = values + self._terms
        terms: list[float] = []
        while (rest := math.fsum(together + [-term for term in terms])) != 0.0:
            terms.append(rest)
        self._terms = terms

    @property
    def value(self) -> float:
        return math.fsum(self._terms)
