"""Fixed-size batches, so that no single query grows with the size of a run."""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable, Iterator, Sequence
from itertools import islice
from typing import TypeVar

T = TypeVar("T")

KEY_BATCH = 900
"""Keys per `IN (...)` lookup: under SQLite's historical limit of 999 variables per query."""


def batches(items: Iterable[T], size: int) -> Iterator[list[T]]:
    if size < 1:
        raise ValueError(f"batch size must be at least 1, got {size}")
    iterator = iter(items)
    while batch := list(islice(iterator, size)):
        yield batch


def sequence_batches(items: Sequence[T], size: int) -> Iterator[Sequence[T]]:
    """Slices of a sequence, without copying it element by element first."""
    if size < 1:
        raise ValueError(f"batch size must be at least 1, got {size}")
    for start in range(0, len(items), size):
        yield items[start : start + size]


def numbered_first_of_each(
    items: Sequence[T], key: Callable[[T], Hashable], start: int = 0
) -> Iterable[tuple[int, T]]:
    """`enumerate(items, start)`, skipping any item whose key an earlier item had. The
    keys are nearly always distinct (a run's case ids), which one set of them shows at
    once, without a generator step and a call per item."""
    numbered = enumerate(items, start)
    if len(set(map(key, items))) == len(items):
        return numbered
    return first_of_each(numbered, key=lambda pair: key(pair[1]))


def first_of_each(items: Iterable[T], key: Callable[[T], Hashable]) -> Iterator[T]:
    """The items in order, skipping any whose key an earlier item already had."""
    seen: set[Hashable] = set()
    for item in items:
        marker = key(item)
        if marker not in seen:
            seen.add(marker)
            yield item
