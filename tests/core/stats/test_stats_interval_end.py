"""Finding an interval's ends (ITP), and the column inputs that spare per-case Python work."""

import math

import numpy as np
import pytest

from oloproof_core.stats import (
    ClusterGroups,
    ReadOrder,
    clustered_paired_difference,
    paired_mean_difference,
    paired_proportion_difference,
)
from oloproof_core.stats._bounded_mean import (
    SCORE_TUNING,
    interval_end,
    max_log_capital,
    plug_in_bets,
)
from oloproof_core.stats._interval_end import TOLERANCE, last_rejected

ALPHA = 0.05
THRESHOLD = math.log(2.0 / ALPHA)


def halving(x, bets, sign, edge, mean, steps=60):
    """The plain bisection the ends were found with before: the reference."""
    rejected, kept = edge.copy(), mean.copy()
    for _ in range(steps):
        middle = 0.5 * (rejected + kept)
        hit = max_log_capital(x, bets, middle, sign, SCORE_TUNING.truncation) >= THRESHOLD
        rejected, kept = np.where(hit, middle, rejected), np.where(hit, kept, middle)
    return rejected, kept


@pytest.mark.parametrize("n", [5, 30, 100, 1000, 20_000])
@pytest.mark.parametrize("shape", ["scores", "pass_fail", "constant"])
def test_each_end_is_rejected_and_within_tolerance_of_the_boundary(n, shape):
    rng = np.random.default_rng(n)
    if shape == "scores":
        x = rng.beta(8, 2, (3, n))
    elif shape == "pass_fail":
        x = (rng.random((3, n)) < 0.9).astype(float)
    else:
        x = np.full((3, n), 0.7)
    bets = plug_in_bets(x, ALPHA, n, SCORE_TUNING)
    mean = x.mean(axis=1)
    c = SCORE_TUNING.truncation
    for sign, edge in ((1.0, np.zeros(3)), (-1.0, np.ones(3))):
        found = interval_end(x, bets, sign, THRESHOLD, edge, mean, c)
        rejected, kept = halving(x, bets, sign, edge, mean)
        open_rows = max_log_capital(x, bets, edge, sign, c) >= THRESHOLD
        for row in np.flatnonzero(open_rows):
            one = (slice(row, row + 1),)
            capital = max_log_capital(x[one], bets[one], found[one], sign, c)[0]
            assert capital >= THRESHOLD, "the reported end must itself be rejected"
            assert abs(found[row] - kept[row]) <= TOLERANCE + abs(kept[row] - rejected[row])
            # It stays on the rejected side of the boundary halving located.
            assert sign * (kept[row] - found[row]) >= 0


def test_far_fewer_evaluations_than_halving():
    rng = np.random.default_rng(3)
    x = rng.beta(8, 2, (1, 100_000))
    bets = plug_in_bets(x, ALPHA, x.shape[1], SCORE_TUNING)
    calls = []

    def excess(m, rows):
        calls.append(rows.size)
        return max_log_capital(x[rows], bets[rows], m, 1.0, SCORE_TUNING.truncation) - THRESHOLD

    last_rejected(excess, np.zeros(1), x.mean(axis=1))
    # Halving needs 42 evaluations to reach the same bracket from [0, mean].
    assert len(calls) <= 20


def test_rows_converge_on_their_own_in_either_direction():
    boundary = np.array([0.5, 0.3])
    direction = np.array([-1.0, 1.0])  # row 0 rejects below its boundary, row 1 above

    def excess(m, rows):
        return direction[rows] * (m - boundary[rows])

    narrow = np.array([0.5 - 1e-14, 0.9])
    found = last_rejected(excess, narrow, np.array([0.5 + 1e-14, 0.1]))
    assert found[0] == narrow[0], "a bracket already below the tolerance is returned as it is"
    assert 0.3 <= found[1] <= 0.3 + TOLERANCE


def paired_sample(n, seed=0, missing=0.05):
    rng = np.random.default_rng(seed)
    a = rng.random(n)
    b = np.clip(a + rng.normal(0.0, 0.1, n), 0.0, 1.0)
    a[rng.random(n) < missing] = np.nan
    return a, b


def as_list(values):
    return [None if math.isnan(v) else float(v) for v in values]


def test_arrays_with_nan_give_the_figures_of_lists_with_none():
    a, b = paired_sample(300)
    keys = [f"case_{i}" for i in range(a.size)]
    from_lists = paired_mean_difference(as_list(a), as_list(b), 0.0, 1.0, keys=keys)
    assert paired_mean_difference(a, b, 0.0, 1.0, keys=keys) == from_lists
    verdicts_a, verdicts_b = np.where(np.isnan(a), np.nan, a > 0.4), (b > 0.45) * 1.0
    lists = (
        [None if math.isnan(v) else bool(v) for v in verdicts_a],
        [bool(v) for v in verdicts_b],
    )
    assert paired_proportion_difference(
        verdicts_a, verdicts_b, keys=keys
    ) == paired_proportion_difference(*lists, keys=keys)


def test_a_verdict_array_refuses_values_other_than_pass_and_fail():
    with pytest.raises(ValueError, match=r"a\[1\] = 0.5: a verdict array holds 1.0"):
        paired_proportion_difference(np.array([1.0, 0.5]), np.array([1.0, 0.0]))


def test_an_array_score_out_of_range_is_named():
    with pytest.raises(ValueError, match=r"b\[2\] = 1.5 is outside the declared range"):
        paired_mean_difference(np.array([0.1, 0.2, 0.3]), np.array([0.1, 0.2, 1.5]), 0.0, 1.0)


def test_a_read_order_worked_out_once_gives_the_figures_of_the_keys():
    a, b = paired_sample(200, seed=4)
    keys = [f"case_{i}" for i in range(a.size)]
    order = ReadOrder.of(keys)
    assert ReadOrder.of(order) is order
    assert paired_mean_difference(a, b, 0.0, 1.0, keys=order) == paired_mean_difference(
        a, b, 0.0, 1.0, keys=keys
    )
    with pytest.raises(ValueError, match="reading order has 200 entries for 3 values"):
        paired_mean_difference(a[:3], b[:3], 0.0, 1.0, keys=order)


def test_cluster_groups_coded_once_give_the_figures_of_the_labels():
    a, b = paired_sample(240, seed=7)
    labels = [f"doc_{i % 12}" for i in range(a.size)]
    from_labels = clustered_paired_difference(as_list(a), as_list(b), labels)
    groups = ClusterGroups(labels)
    assert clustered_paired_difference(a, b, groups) == from_labels
    names = sorted(set(labels))
    codes = [names.index(label) for label in labels]
    assert clustered_paired_difference(a, b, ClusterGroups.from_codes(codes, names)) == from_labels
    with pytest.raises(ValueError, match="clusters has 240 entries for 10 rows"):
        clustered_paired_difference(a[:10], b[:10], groups)
