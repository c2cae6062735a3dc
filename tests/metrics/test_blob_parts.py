"""A large byte column written in parts reads back as the parts joined, exactly.

Run on SQLite by default and on PostgreSQL with DATABASE_URL set: the column is read
back through the ORM and compared with the bytes the parts make together.
"""

from __future__ import annotations

import array
import hashlib
import random
import tracemalloc
from collections.abc import Iterator
from pathlib import Path

import pytest
from django.db import transaction

from metrics.bulk_rows import large_bytes_write
from metrics.models import RunValueColumns
from runs.models import Project, Run

pytestmark = pytest.mark.django_db


@pytest.fixture
def columns() -> RunValueColumns:
    project = Project.objects.create(slug="blob-parts", name="blob parts")
    run = Run.objects.create(project=project)
    return RunValueColumns.objects.create(run=run, case_ids="[]", values=b"old value")


def stored(row: RunValueColumns, column: str = "values") -> bytes | None:
    value = RunValueColumns.objects.values_list(column, flat=True).get(pk=row.pk)
    return None if value is None else bytes(value)


def write(row: RunValueColumns, parts: object, total: int, column: str = "values") -> None:
    large_bytes_write(
        model=RunValueColumns,
        pk=row.pk,
        column=column,
        parts=parts,  # type: ignore[arg-type]  # the tests hand in every kind of part
        total=total,
    )


@pytest.mark.parametrize("column", ["values", "read_order"])
def test_parts_of_different_sizes_are_joined_exactly(columns: RunValueColumns, column: str) -> None:
    rng = random.Random(7)
    parts = [rng.randbytes(size) for size in (1, 0, 65_536, 3, 1_000_003, 17, 0, 250_000)]
    whole = b"".join(parts)

    write(columns, parts, len(whole), column)

    assert stored(columns, column) == whole


def test_memoryview_parts_are_written_as_their_bytes(columns: RunValueColumns) -> None:
    floats = array.array("d", [1.5, float("nan"), -0.0, 1e300])
    codes = array.array("i", [-1, 0, 7, 2**31 - 1])
    backing = bytearray(range(256))
    parts = [memoryview(floats), memoryview(backing)[10:50], memoryview(codes), memoryview(b"")]
    whole = floats.tobytes() + bytes(backing[10:50]) + codes.tobytes()

    write(columns, parts, len(whole))

    assert stored(columns) == whole


def test_no_parts_leave_the_empty_value(columns: RunValueColumns) -> None:
    write(columns, [], 0)
    assert stored(columns) == b""

    write(columns, iter([b"", memoryview(b"")]), 0)
    assert stored(columns) == b""


@pytest.mark.parametrize(
    ("parts", "total", "sent"),
    [
        ([b"abc", b"defg", b"hi"], 8, 9),  # over, on the last part
        ([b"abc", b"defg", b"hi", b"jklmn"], 4, 14),  # over early: the rest still counted
        ([b"abc", b"defg"], 10, 7),  # short
        ([], 3, 0),
        ([b"x"], 0, 1),
    ],
    ids=["over-at-the-end", "over-early", "short", "none-of-three", "one-of-none"],
)
def test_parts_of_another_length_than_the_total_are_refused_and_change_nothing(
    columns: RunValueColumns, parts: list[bytes], total: int, sent: int
) -> None:
    with transaction.atomic():
        with pytest.raises(ValueError, match=rf"add up to {sent} bytes, not the total of {total}"):
            write(columns, (part for part in parts), total)
        # The caller's transaction goes on, and the half-written bytes are gone.
        assert stored(columns) == b"old value"
        write(columns, [b"new ", b"value"], 9)
    assert stored(columns) == b"new value"


def test_a_generator_reading_a_file_into_one_reused_buffer(
    columns: RunValueColumns, tmp_path: Path
) -> None:
    whole = random.Random(11).randbytes(2_500_001)
    path = tmp_path / "values.bin"
    path.write_bytes(whole)
    asked = 0

    def chunks(size: int) -> Iterator[memoryview]:
        # One buffer, refilled for every part: a part written any later than before
        # the next one is asked for would come out as the last part's bytes.
        nonlocal asked
        buffer = bytearray(size)
        with path.open("rb") as file:
            while read := file.readinto(buffer):
                asked += 1
                yield memoryview(buffer)[:read]

    write(columns, chunks(300_000), len(whole))

    assert stored(columns) == whole
    assert asked == 9


def test_only_one_part_is_held_at_a_time(columns: RunValueColumns) -> None:
    part_size, count = 256 * 1024, 64  # 16 MiB in all
    digest = hashlib.sha256()

    def parts() -> Iterator[bytes]:
        rng = random.Random(5)
        for _ in range(count):
            part = rng.randbytes(part_size)
            digest.update(part)
            yield part

    tracemalloc.start()
    try:
        write(columns, parts(), part_size * count)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()

    assert peak < 8 * part_size, f"{peak} bytes at the peak, parts of {part_size}"
    assert hashlib.sha256(stored(columns) or b"").digest() == digest.digest()


def test_a_missing_row_is_not_found(columns: RunValueColumns) -> None:
    with pytest.raises(RunValueColumns.DoesNotExist):
        write(columns.__class__(run_id=columns.pk + 1), [b"abc"], 3)
    assert stored(columns) == b"old value"
