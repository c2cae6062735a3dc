"""The exact interval within a pass/fail judge's two verdicts: its coverage computed over
every outcome, its ends, and where the labelled interval uses it."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from oloproof_core.stats import clopper_pearson, prediction_powered_interval
from oloproof_core.stats._verdict_strata import verdict_strata_bounds


def _draws(n1: int, x1: int, n0: int, x0: int) -> tuple[np.ndarray, np.ndarray]:
    labels = np.array([1.0] * x1 + [0.0] * (n1 - x1) + [1.0] * x0 + [0.0] * (n0 - x0))
    return labels, np.array([1.0] * n1 + [0.0] * n0)


def _pmf(n: int, x: int, p: float) -> float:
    return math.comb(n, x) * p**x * (1.0 - p) ** (n - x)


@pytest.mark.parametrize(("n1", "n0", "w"), [(6, 4, 0.6), (3, 7, 0.3), (9, 1, 0.85)])
def test_coverage_summed_over_every_outcome_is_at_least_95_percent(
    n1: int, n0: int, w: float
) -> None:
    # Given how many draws landed in each verdict, the passes are two binomials: the
    # chance of covering w a + (1 - w) b is a finite sum, computed here exactly for a
    # grid of (a, b), with no simulation. A test that over-stated its ends' chances
    # too little, or a box that missed too often, shows up as a sum below 0.95.
    ends = {
        (x1, x0): verdict_strata_bounds(*_draws(n1, x1, n0, x0), w, 0.05)[:2]
        for x1, x0 in itertools.product(range(n1 + 1), range(n0 + 1))
    }
    for a, b in itertools.product(np.linspace(0.0, 1.0, 13), repeat=2):
        truth = w * a + (1.0 - w) * b
        covered = sum(
            _pmf(n1, x1, a) * _pmf(n0, x0, b)
            for (x1, x0), (lower, upper) in ends.items()
            if lower <= truth <= upper
        )
        assert covered >= 0.95, (a, b, covered)


def test_a_judge_that_agrees_narrows_the_interval_well_below_the_labels_alone() -> None:
    # 100 draws, the judge passing 66 % of cases: 63 of 66 passes confirmed, 7 of 34
    # failures passed by people (a judge agreeing on 90 %).
    lower, upper, estimate = verdict_strata_bounds(*_draws(66, 63, 34, 7), 0.66, 0.05)
    alone = clopper_pearson(70, 100)
    assert lower < estimate < upper
    assert upper - lower < 0.8 * alone.width
    # Lower and upper ends each close to the estimate's Wald ends (within a third).
    wald = 1.96 * math.sqrt(0.66**2 * (63 / 66) * (3 / 66) / 66 + 0.34**2 * 0.2 * 0.8 / 34)
    assert (upper - lower) / 2 < 1.33 * wald


def test_one_verdict_for_every_case_leaves_clopper_pearson_on_the_labels() -> None:
    labels, verdicts = _draws(40, 31, 0, 0)
    lower, upper, _ = verdict_strata_bounds(labels, verdicts, 1.0, 0.05)
    alone = clopper_pearson(31, 40)
    assert (lower, upper) == pytest.approx((alone.lower, alone.upper), abs=1e-12)
    assert verdict_strata_bounds(np.zeros(0), np.zeros(0), 0.4, 0.05) == (0.0, 1.0, 0.4)


def test_a_split_label_counts_as_a_failure_below_and_a_pass_above() -> None:
    labels, verdicts = _draws(60, 50, 40, 10)
    halved = labels.copy()
    halved[0] = 0.5  # a confirmed pass that two people split on
    low_half, high_half, _ = verdict_strata_bounds(halved, verdicts, 0.6, 0.05)
    failed = labels.copy()
    failed[0] = 0.0
    assert low_half == pytest.approx(verdict_strata_bounds(failed, verdicts, 0.6, 0.05)[0])
    assert high_half == pytest.approx(verdict_strata_bounds(labels, verdicts, 0.6, 0.05)[1])


def _engine(verdicts: np.ndarray, drawn: np.ndarray, truth: np.ndarray):
    cases = verdicts.size
    return prediction_powered_interval(
        verdicts, np.full(cases, 1.0 / cases), drawn, truth[drawn], 0, exact_labels=True
    )


def test_the_labelled_interval_uses_it_from_100_labels_with_a_two_valued_judge() -> None:
    rng = np.random.default_rng(3)
    truth = (rng.random(500) < 0.7).astype(float)
    judge = np.where(rng.random(500) < 0.9, truth, 1.0 - truth)
    drawn = rng.integers(0, 500, 100)
    found = _engine(judge, drawn, truth).interval
    expected = verdict_strata_bounds(truth[drawn], judge[drawn], float(judge.mean()), 0.05)
    assert (found.lower, found.upper) == pytest.approx(expected[:2], abs=1e-12)
    # With fewer labels, or verdicts that are not all pass or fail (the mean of a
    # judge's repeats), the betting interval and Clopper–Pearson's common part instead.
    fewer = _engine(judge, drawn[:99], truth).interval
    assert (fewer.lower, fewer.upper) != pytest.approx(
        verdict_strata_bounds(truth[drawn[:99]], judge[drawn[:99]], float(judge.mean()), 0.05)[:2]
    )
    thirds = judge.copy()
    thirds[np.flatnonzero(judge == 1.0)[0]] = 2.0 / 3.0
    repeated = _engine(thirds, drawn, truth).interval
    assert repeated.lower != pytest.approx(found.lower, abs=1e-9)


def test_coverage_over_simulated_releases_at_100_labels() -> None:
    # 300 releases of a valid 95 % interval cover at least 270 times except with
    # probability 1.3e-4; the seed is fixed, so the outcome is reproducible.
    rng = np.random.default_rng(20_261_208)
    covered = 0
    for _ in range(300):
        truth = (rng.random(400) < 0.7).astype(float)
        judge = np.where(rng.random(400) < 0.9, truth, 1.0 - truth)
        judge = np.where((truth == 0.0) & (rng.random(400) < 0.3), 1.0, judge)  # lenient
        drawn = rng.integers(0, 400, 100)
        covered += _engine(judge, drawn, truth).interval.contains(float(truth.mean()))
    assert covered >= 270
