"""Columns kept in temporary files read back as they were written."""

from __future__ import annotations

import math
import random
from array import array

import numpy as np
import pytest

from oloproof_core.results.columns import spill
from oloproof_core.results.columns.spill import ExactSum, Spill


def test_a_column_reads_back_in_blocks_in_parts_and_whole(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(spill, "SPILL_BLOCK", 100)
    floats = Spill("d")
    floats.append(0.5)
    floats.repeat(math.nan, 250)
    floats.add_block(np.arange(3, dtype=np.float64))
    floats.extend([7.0, 8.0])
    assert len(floats) == 256
    whole = floats.whole()
    assert whole[0] == 0.5
    assert np.isnan(whole[1:251]).all()
    assert whole[251:].tolist() == [0.0, 1.0, 2.0, 7.0, 8.0]
    assert [block.size for block in floats.blocks()] == [100, 100, 56]
    assert floats.read(250, 10).size == 6  # fewer past the end
    assert b"".join(floats.byte_parts(7)) == whole.astype("<f8").tobytes()
    assert floats.nbytes == 256 * 8


def test_codes_are_32_bit_integers() -> None:
    codes = Spill("i")
    codes.extend([-1, 3, 2_000_000_000])
    assert codes.whole().tolist() == [-1, 3, 2_000_000_000]
    assert b"".join(codes.byte_parts()) == array("i", [-1, 3, 2_000_000_000]).tobytes()
    with pytest.raises(ValueError, match="floats"):
        Spill("q")


def test_an_empty_column_is_empty() -> None:
    empty = Spill("d")
    assert len(empty) == 0
    assert empty.whole().size == 0
    assert list(empty.blocks()) == []
    assert list(empty.byte_parts()) == []


def test_the_sum_of_blocks_is_fsum_of_every_value_to_the_last_bit() -> None:
    generator = random.Random(5)
    values = [generator.uniform(-1, 1) * 10.0 ** generator.randint(-20, 20) for _ in range(20_000)]
    values += [1e16, 1.0, -1e16, 1e-16] * 50  # cancellations a running float sum loses
    total = ExactSum()
    for start in range(0, len(values), 333):
        total.add(values[start : start + 333])
    assert total.value == math.fsum(values)
    assert total.value != sum(values)
    assert ExactSum().value == 0.0
