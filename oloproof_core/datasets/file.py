"""A dataset file checked without holding its rows, then read again a row at a time.

`load_dataset` keeps every row in memory (a million small rows: over a gigabyte).
Queueing a run for the workers needs less: that the file is good, its digest, its size,
and its rows written to the database once. `check_dataset_file` reads the file a record
at a time, checks every row as `load_dataset` does (the same errors, naming the file and
the line) and computes the same digest, keeping only the ids' hashes
(`oloproof_core.datasets.ids`); `DatasetFile.rows` reads it again for the writer, and
refuses a file that changed in between.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterator
from dataclasses import dataclass, field

from oloproof_core.datasets.dataset import checked_rows, no_split_rows_error, split_digest
from oloproof_core.datasets.ids import IdHashes
from oloproof_core.datasets.readers import read_records
from oloproof_core.datasets.rows import Row
from oloproof_core.errors import DatasetError


@dataclass(frozen=True, slots=True)
class DatasetFile:
    """What a loaded `Dataset` knows but its rows: the file, the digest, the number of
    rows (of `split`, when one was chosen) and each split's count in the whole file."""

    source: str
    digest: str
    n_cases: int
    split: str | None = None
    splits: dict[str, int] = field(default_factory=dict)
    unrepeated_digest: str = ""
    """As `Dataset.unrepeated_digest`: the digest before repeats, for repeated rows."""

    def __len__(self) -> int:
        return self.n_cases

    def rows(self) -> Iterator[Row]:
        """The rows (of the split) in the file's order, read and checked again one at a
        time; a DatasetError once they are read if the file no longer has this digest."""
        hasher = hashlib.sha256()
        for _, row in checked_rows(self.source, read_records(self.source), hasher, _checked):
            if self.split is None or row.split == self.split:
                yield row
        digest = hasher.hexdigest()
        if (digest if self.split is None else split_digest(digest, self.split)) != self.digest:
            raise DatasetError(
                self.source, None, "the file changed while its rows were read; submit it again"
            )


def check_dataset_file(path: str | os.PathLike[str], *, split: str | None = None) -> DatasetFile:
    """The dataset file at `path` (.jsonl, .json or .csv) checked row by row, as
    `load_dataset(path, split=split)` checks it, and described without its rows."""
    source = os.fspath(path)
    records = read_records(source)
    ids = IdHashes()
    hasher = hashlib.sha256()
    splits: dict[str, int] = {}
    try:
        for _, row in checked_rows(source, records, hasher, ids.add):
            if row.split is not None:
                splits[row.split] = splits.get(row.split, 0) + 1
    except DatasetError:
        # A row before this one may repeat an id: that comes first in the file.
        repeat = ids.first_repeat(source, lambda: read_records(source))
        if repeat is None:
            raise
        raise repeat from None
    repeat = ids.first_repeat(source, lambda: read_records(source))
    if repeat is not None:
        raise repeat
    if not len(ids):
        raise DatasetError(source, None, "the dataset has no rows")
    if split is None:
        return DatasetFile(source, hasher.hexdigest(), len(ids), None, splits)
    if not splits.get(split):
        raise no_split_rows_error(source, split, splits)
    return DatasetFile(
        source, split_digest(hasher.hexdigest(), split), splits[split], split, splits
    )


def _checked(row_id: str, line: int) -> None:
    """Every id was checked when the file was; the digest tells if it changed since."""
