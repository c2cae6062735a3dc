"""A score metric's interval read from a file a block at a time is the interval of the
column held whole, to the last bit."""

from __future__ import annotations

import numpy as np
import pytest

from oloproof_core.results.columns import spill
from oloproof_core.results.columns.spill import Spill
from oloproof_core.stats import (
    ReadOrder,
    _blocks,
    _spilled,
    completed_mean_interval,
    spilled_mean_interval,
)


def column(n: int, seed: int, missing: float) -> np.ndarray:
    generator = np.random.default_rng(seed)
    values = 1.0 + 4.0 * generator.beta(2.0, 3.0, n)
    values[generator.random(n) < missing] = np.nan
    return values


def spilled(values: np.ndarray) -> Spill:
    found = Spill("d")
    found.extend(values.tolist())
    return found


@pytest.mark.parametrize(
    ("n", "block_values", "missing"),
    [(1, 128, 0.0), (300, 128, 0.1), (5000, 128, 0.02), (5000, 1000, 0.0), (70_000, 1 << 16, 0.3)],
)
def test_the_interval_from_a_file_is_the_interval_of_the_whole_column(
    monkeypatch: pytest.MonkeyPatch, n: int, block_values: int, missing: float
) -> None:
    values = column(n, n, missing)
    # The file holds the column in reading order: the column read in its own order.
    whole = completed_mean_interval(values.copy(), 1.0, 5.0, 0.95, keys=ReadOrder(np.arange(n)))
    monkeypatch.setattr(_spilled, "READ_BLOCK", block_values)
    monkeypatch.setattr(spill, "SPILL_BLOCK", block_values)
    assert spilled_mean_interval(spilled(values), Spill, 1.0, 5.0, 0.95) == whole


def test_every_missing_score_and_no_score_give_the_whole_range() -> None:
    everything_missing = spilled(np.full(40, np.nan))
    assert spilled_mean_interval(everything_missing, Spill, 0.0, 1.0).lower == 0.0
    assert spilled_mean_interval(everything_missing, Spill, 0.0, 1.0).upper == 1.0
    nothing = spilled_mean_interval(Spill("d"), Spill, 2.0, 3.0)
    assert (nothing.lower, nothing.upper) == (2.0, 3.0)


def test_the_bets_files_are_closed_when_the_interval_is_found() -> None:
    made: list[Spill] = []

    def scratch() -> Spill:
        made.append(Spill("d"))
        return made[-1]

    spilled_mean_interval(spilled(column(500, 4, 0.05)), scratch, 1.0, 5.0)
    assert len(made) == 2  # one for each end's bets
    for bets in made:
        with pytest.raises(ValueError, match="closed file"):
            bets.read(0, 1)


def test_numpys_sum_is_reproduced_reading_parts() -> None:
    generator = np.random.default_rng(11)
    for n in (1, 127, 129, 1000, 8193, 100_003):
        values = generator.random(n) * 10.0 ** generator.integers(-8, 8, n)
        found = _blocks.pairwise_sum(
            lambda start, count, values=values: values[start : start + count], n, 200
        )
        assert found == float(values[None, :].sum(axis=1)[0])
