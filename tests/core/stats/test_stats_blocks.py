"""Long samples read in blocks give the figures of one pass over the whole sample."""

from __future__ import annotations

import numpy as np
import pytest

from oloproof_core.stats import _blocks
from oloproof_core.stats._bounded_mean import (
    DIFFERENCE_TUNING,
    SCORE_TUNING,
    bounded_mean_bounds,
    max_log_capital,
    plug_in_bets,
)


def figures(x: np.ndarray) -> list[np.ndarray]:
    bets = plug_in_bets(x, 0.05, x.shape[1], SCORE_TUNING)
    m = np.linspace(0.2, 0.8, x.shape[0])
    return [
        bets,
        plug_in_bets(x, 0.1, 2 * x.shape[1], DIFFERENCE_TUNING),
        max_log_capital(x, bets, m, 1.0),
        max_log_capital(x, bets, m, -1.0, 0.99),
        bounded_mean_bounds(x, 0.95),
    ]


@pytest.mark.parametrize("block_values", [1, 7, 64, 999])
def test_blocks_of_any_width_give_the_same_figures_to_the_last_bit(
    monkeypatch: pytest.MonkeyPatch, block_values: int
) -> None:
    generator = np.random.default_rng(3)
    x = np.concatenate(
        (generator.beta(2.0, 5.0, (2, 300)), (generator.random((2, 300)) < 0.7).astype(float))
    )
    whole = figures(x)  # the default block holds every value here: one pass
    monkeypatch.setattr(_blocks, "BLOCK_VALUES", block_values)
    assert len(list(_blocks.blocks(x))) > 1 or block_values == 999
    for in_blocks, in_one in zip(figures(x), whole, strict=True):
        assert np.array_equal(in_blocks, in_one)
