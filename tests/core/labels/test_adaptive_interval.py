"""The labelled interval that learns how far to lean on the judge: valid, never far wider
than the labels alone, narrower with a judge that agrees, and strict about its input."""

from __future__ import annotations

import numpy as np
import pytest

from oloproof_core.stats import (
    DIFFERENCE_TUNING,
    SCORE_TUNING,
    bounded_mean_interval,
    clopper_pearson,
    prediction_powered_interval,
)
from oloproof_core.stats._power_tuned import Rectified, _terms

CASES = 400


def _release(rng: np.random.Generator, agreement: float, n: int, rate: float = 0.7):
    """A pass/fail release of CASES cases, a judge that agrees with people on
    `agreement` of them, and n uniform draws with their people's values."""
    truth = (rng.random(CASES) < rate).astype(float)
    judge = np.where(rng.random(CASES) < agreement, truth, 1.0 - truth)
    drawn = rng.integers(0, CASES, n)
    return truth, judge, drawn


def _interval(truth, judge, drawn, *, exact: bool = True, tuning=SCORE_TUNING):
    return prediction_powered_interval(
        judge,
        np.full(judge.size, 1.0 / judge.size),
        drawn,
        truth[drawn],
        0,
        0.95,
        tuning=tuning,
        exact_labels=exact,
    ).interval


@pytest.mark.parametrize("agreement", [0.9, 0.5, 0.2])
def test_ten_labels_cover_the_truth_whatever_the_judge(agreement: float) -> None:
    # A valid 95 % interval misses in at most 5 % of releases: 300 releases cover at
    # least 270 times except with probability 1.3e-4 (binomial tail, 15 expected misses
    # against 30 allowed). The seed is fixed, so the outcome is reproducible;
    # a failure means the interval is not valid at ten labels.
    rng = np.random.default_rng(20_261_207)
    covered = 0
    for _ in range(300):
        truth, judge, drawn = _release(rng, agreement, 10)
        covered += _interval(truth, judge, drawn).contains(float(truth.mean()))
    assert covered >= 270


def test_score_labels_cover_the_truth_with_a_biased_judge() -> None:
    # Same bound as above: at least 270 of 300 for a valid interval.
    rng = np.random.default_rng(11)
    covered = 0
    for _ in range(300):
        truth = rng.beta(4.0, 2.0, CASES)
        judge = np.clip(truth + 0.2 + rng.normal(0.0, 0.1, CASES), 0.0, 1.0)
        drawn = rng.integers(0, CASES, 30)
        found = _interval(truth, judge, drawn, exact=False, tuning=DIFFERENCE_TUNING)
        covered += found.contains(float(truth.mean()))
    assert covered >= 270


@pytest.mark.parametrize("n", [10, 30, 100, 300])
def test_a_coin_of_a_judge_costs_under_a_tenth_of_the_labels_alone_width(n: int) -> None:
    # For a pass/fail metric the interval lies within Clopper-Pearson's on the labels at
    # 70 % of the error rate, at most 1.097 times as wide as at the full rate for every
    # count of passes: this holds for every release, not on average.
    rng = np.random.default_rng(n)
    for _ in range(20):
        truth, judge, drawn = _release(rng, 0.5, n)
        alone = clopper_pearson(int(truth[drawn].sum()), n)
        assert _interval(truth, judge, drawn).width <= 1.1 * alone.width


def test_an_agreeing_judge_narrows_the_interval_and_a_coin_is_leaned_on_less() -> None:
    rng = np.random.default_rng(5)
    ratios = []
    for _ in range(20):
        truth, judge, drawn = _release(rng, 0.95, 300)
        alone = clopper_pearson(int(truth[drawn].sum()), 300)
        ratios.append(_interval(truth, judge, drawn).width / alone.width)
    assert np.mean(ratios) < 0.8
    # Scores from a judge that ignores the truth: close to the labels' own betting
    # interval (measured 1.00 at 300 labels), far from the 1.9 times of leaning fully.
    truth = rng.beta(4.0, 2.0, CASES)
    judge = rng.random(CASES)
    drawn = rng.integers(0, CASES, 300)
    found = _interval(truth, judge, drawn, exact=False, tuning=DIFFERENCE_TUNING)
    assert found.width < 1.15 * bounded_mean_interval(truth[drawn]).width


def test_each_lean_and_bet_depends_only_on_the_labels_before_it() -> None:
    rng = np.random.default_rng(2)
    labels = (rng.random((1, 50)) < 0.6).astype(float)
    verdicts = np.where(rng.random((1, 50)) < 0.8, labels, 1.0 - labels)
    changed = labels.copy()
    changed[0, 30:] = 1.0 - changed[0, 30:]

    def terms(values):
        draws = Rectified(values, verdicts, np.array([0.6]), np.ones(1), np.zeros(1), 1.0)
        return _terms(draws, 0.05, 50, SCORE_TUNING)

    before, after = terms(labels), terms(changed)
    # Draw 30's label changed: every bet and range up to and including draw 30 stays,
    # the term of draw 30 itself moves, and later bets may.
    assert np.array_equal(before.bets[:, :31], after.bets[:, :31])
    assert np.array_equal(before.low[:, :31], after.low[:, :31])
    assert np.array_equal(before.values[:, :30], after.values[:, :30])
    assert not np.array_equal(before.values[:, 30], after.values[:, 30])


def test_bad_input_is_refused_with_what_is_wrong() -> None:
    judge = np.array([1.0, 0.0, 1.0])
    uniform = np.full(3, 1.0 / 3.0)
    with pytest.raises(ValueError, match=r"truth values must lie in \[0, 1\]"):
        prediction_powered_interval(judge, uniform, [0], [1.5], 0, exact_labels=True)
    with pytest.raises(ValueError, match="judge values"):
        prediction_powered_interval([2.0, 0.0, 1.0], uniform, [0], [1.0], 0)
    with pytest.raises(ValueError, match="2 draws but 1 labels"):
        prediction_powered_interval(judge, uniform, [0, 1], [1.0], 0)
    with pytest.raises(ValueError, match="outside the observed cases"):
        prediction_powered_interval(judge, uniform, [3], [1.0], 0)
    with pytest.raises(ValueError, match="drawing probability above 0"):
        prediction_powered_interval(judge, [0.5, 0.5, 0.0], [0], [1.0], 0)
    with pytest.raises(ValueError, match="confidence"):
        prediction_powered_interval(judge, uniform, [0], [1.0], 0, confidence=1.5)
