"""Repeated row ids in a dataset checked as it streams, kept as 8 bytes a row.

A file checked without keeping its rows (`oloproof_core.datasets.file`) must still refuse
an id that comes twice. It keeps each row's id as its 64-bit `hash()` in an array: 8
bytes a row (8 MB for a million rows, and 1 more a row for a moment at the end, while
neighbours are compared in place), where a set of the ids themselves would keep each
id's string (57 bytes for an 8-character id) and a slot of the set's table (16 to 32
bytes), some 90 bytes a row. Equal hashes only suggest a repeat: the records are read
again and the ids themselves compared, which also finds the line where the id first
came. Python keys its string hash per process, so a file cannot be made to collide on
purpose; a collision by chance costs that second reading, never a wrong refusal.
"""

from __future__ import annotations

from array import array
from collections.abc import Callable, Iterable
from typing import Any

from oloproof_core.datasets.dataset import duplicate_id_error
from oloproof_core.errors import DatasetError


class IdHashes:
    """The hashes of a dataset's row ids, as the rows came."""

    __slots__ = ("_hashes",)

    def __init__(self) -> None:
        self._hashes = array("q")

    def __len__(self) -> int:
        return len(self._hashes)

    def add(self, row_id: str, line: int) -> None:
        """Note a row's id (a `seen` for `checked_rows`); `first_repeat` finds repeats."""
        self._hashes.append(hash(row_id))

    def first_repeat(
        self, source: str, records: Callable[[], Iterable[tuple[int, Any]]]
    ) -> DatasetError | None:
        """The error `load_dataset` gives for the first row whose id an earlier row had
        (its line, and the line that id first came on), or None. `records()` reads the
        file's records again from its start, only if some hashes are equal. Asked once:
        the hashes are sorted in place to be compared, so no copy of them is made."""
        rows = len(self._hashes)
        suspects = self._repeated_hashes()
        if not suspects:
            return None
        first_line: dict[str, int] = {}
        for index, (line, item) in enumerate(records()):
            if index == rows:
                break
            row_id = item["id"]  # a row already checked: its id is a string
            if hash(row_id) in suspects:
                if row_id in first_line:
                    return duplicate_id_error(source, line, row_id, first_line[row_id])
                first_line[row_id] = line
        return None

    def _repeated_hashes(self) -> set[int]:
        """The hashes that came more than once (nearly always none)."""
        import numpy as np

        if len(self._hashes) < 2:
            return set()
        ordered = np.frombuffer(self._hashes, dtype=np.int64)
        ordered.sort()
        repeated = ordered[1:][ordered[1:] == ordered[:-1]]
        return set(repeated.tolist())
