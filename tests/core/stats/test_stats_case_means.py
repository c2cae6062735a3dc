"""A sequential gate's repeated cases read as each case's mean (`stats.case_means`)."""

from __future__ import annotations

import numpy as np
import pytest

from oloproof_core.stats import case_means, running_interval


def test_equal_repeats_give_each_case_its_mean_keyed_by_the_case() -> None:
    worst = np.array([1.0, 0.0, 1.0, 0.0, 0.0, 0.0])
    best = np.array([1.0, 1.0, 1.0, 0.0, 0.0, 1.0])  # two repeats missing, at 0 and 1
    rows = ["b#r1", "b#r2", "b#r3", "a#r1", "a#r2", "a#r3"]
    found = case_means(worst, best, rows, ["b", "b", "b", "a", "a", "a"])
    assert found is not None
    low, high, keys = found
    assert keys == ["a", "b"]
    assert low == pytest.approx([0.0, 2 / 3])
    assert high == pytest.approx([1 / 3, 1.0])


def test_unequal_repeats_are_not_read_as_means() -> None:
    values = np.ones(3)
    assert case_means(values, values, ["a#r1", "a#r2", "b#r1"], ["a", "a", "b"]) is None


def test_the_running_interval_over_case_means_covers_the_mean_of_the_case_rates() -> None:
    # 400 releases of 80 cases, three repeats each, every case with a rate of its own: the
    # anytime-valid interval on the case means, read after 40 and after 80 cases, misses
    # the mean rate at either look in at most 5 % of releases (3.97 % of 3,000 releases
    # measured; 22 of these 400). More than 30 misses has a chance near 1 % if valid.
    rng = np.random.default_rng(7)
    missed = 0
    for _ in range(400):
        rates = rng.beta(0.5, 0.5, 80)
        tries = (rng.random((80, 3)) < rates[:, None]).astype(float).reshape(-1)
        cases = [f"c{i}" for i in range(80) for _ in range(3)]
        rows = [f"{case}#r{j}" for case in [f"c{i}" for i in range(80)] for j in (1, 2, 3)]
        low, high, keys = case_means(tries, tries, rows, cases) or (None, None, None)
        assert keys is not None
        for seen in (40, 80):
            lower, upper = running_interval(low[:seen], high[:seen], keys[:seen], 80)
            if not lower <= 0.5 <= upper:
                missed += 1
                break
    assert missed <= 30
