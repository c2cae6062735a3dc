import functools
import itertools

import numpy as np
import pytest
from scipy import integrate
from scipy.stats import beta, binom, binomtest, norm

from oloproof_core.stats import (
    bounded_mean_bounds,
    mcnemar_exact_p_value,
    paired_mean_difference,
    paired_proportion_difference,
)


def runs_from_table(both, only_a, only_b, neither):
    """Baseline/candidate verdict lists from a 2x2 table of paired outcomes."""
    a = [True] * both + [True] * only_a + [False] * only_b + [False] * neither
    b = [True] * both + [False] * only_a + [True] * only_b + [False] * neither
    return a, b


def test_agresti_presidential_approval_example():
    # Agresti, Categorical Data Analysis (3rd ed.), §11.1, Table 11.1: approval
    # of the Prime Minister in two surveys of the same 1600 people; 794 approve
    # both times, 150 approve then disapprove, 86 disapprove then approve, 570
    # disapprove both. Change in approval -0.04, Wald interval (-0.06, -0.02),
    # McNemar z = -4.17 (p < 0.001).
    a, b = runs_from_table(794, 150, 86, 570)
    result = paired_proportion_difference(a, b)
    assert result.difference == pytest.approx(-0.04, abs=1e-15)
    assert result.estimate_a == pytest.approx(944 / 1600)
    assert result.estimate_b == pytest.approx(880 / 1600)
    assert (result.n_improved, result.n_regressed) == (86, 150)
    assert result.n_pairs == 1600
    assert result.n_missing == 0
    # The p-value is the betting test on the interval's own capital (it used to be
    # McNemar's, which could disagree with the interval); both reject clearly here.
    assert binomtest(86, 236, 0.5).pvalue < result.p_value < 0.01
    assert result.interval.upper < 0
    assert result.interval.contains(-0.04)
    # Finite-sample validity costs little at this size against the Wald interval.
    assert -0.07 < result.interval.lower < -0.055
    assert -0.03 < result.interval.upper < -0.02


@pytest.mark.parametrize(("improved", "regressed"), [(0, 0), (3, 0), (5, 9), (40, 41), (1, 20)])
def test_mcnemar_matches_scipy_binomial_test(improved, regressed):
    total = improved + regressed
    expected = 1.0 if total == 0 else binomtest(improved, total).pvalue
    assert mcnemar_exact_p_value(improved, regressed) == pytest.approx(expected, rel=1e-12)


def test_clear_regression_is_flagged():
    # Fixed seed: deterministic (0 of 2000 fresh seeds would have failed).
    rng = np.random.default_rng(3)
    baseline = rng.random(300) < 0.9
    candidate = baseline & (rng.random(300) > 0.25)
    result = paired_proportion_difference(list(baseline), list(candidate))
    assert result.interval.upper < 0
    assert result.p_value < 1e-6


def test_identical_runs_show_no_difference():
    verdicts = [True, False, True, True] * 10
    result = paired_proportion_difference(verdicts, verdicts)
    assert result.difference == 0.0
    assert result.p_value == 1.0
    assert result.interval.contains(0.0)
    assert (result.n_improved, result.n_regressed) == (0, 0)


def test_everything_missing_spans_full_range():
    result = paired_proportion_difference([None] * 4, [True, None, False, None])
    assert result.difference is None
    assert result.estimate_a is None
    assert (result.interval.lower, result.interval.upper) == (-1.0, 1.0)
    assert result.n_missing == 4
    assert result.p_value == 1.0


def test_empty_runs():
    result = paired_proportion_difference([], [])
    assert (result.interval.lower, result.interval.upper) == (-1.0, 1.0)
    assert result.n_pairs == 0


def test_rejects_misaligned_or_non_boolean_runs():
    with pytest.raises(ValueError, match="index-aligned"):
        paired_proportion_difference([True], [True, False])
    with pytest.raises(TypeError, match=r"b\[1\]"):
        paired_proportion_difference([True, True], [True, 1])


def completions(run):
    gaps = [i for i, v in enumerate(run) if v is None]
    for filling in itertools.product([False, True], repeat=len(gaps)):
        filled = list(run)
        for i, v in zip(gaps, filling, strict=True):
            filled[i] = v
        yield filled


@pytest.mark.parametrize("seed", range(6))
def test_missing_p_value_is_at_least_every_completions(seed):
    rng = np.random.default_rng(seed)
    n = 14
    a = [None if rng.random() < 0.2 else bool(rng.random() < 0.7) for _ in range(n)]
    b = [None if rng.random() < 0.2 else bool(rng.random() < 0.5) for _ in range(n)]
    reported = paired_proportion_difference(a, b)
    for full_a in completions(a):
        for full_b in completions(b):
            assert reported.p_value >= paired_proportion_difference(full_a, full_b).p_value - 1e-12


@pytest.mark.parametrize("seed", range(40))
def test_p_value_and_interval_never_disagree(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(10, 120))
    a = [None if rng.random() < 0.05 else bool(rng.random() < 0.7) for _ in range(n)]
    b = [
        None if rng.random() < 0.05 else bool(rng.random() < rng.uniform(0.4, 0.9))
        for _ in range(n)
    ]
    for result in (
        paired_proportion_difference(a, b),
        paired_mean_difference(
            [None if v is None else float(v) * rng.uniform(0.5, 1) for v in a],
            [None if v is None else float(v) * rng.uniform(0.5, 1) for v in b],
            0.0,
            1.0,
        ),
    ):
        excluded = not result.interval.contains(0.0)
        assert excluded == (result.p_value <= 0.05 + 1e-12), (result.interval, result.p_value)


@pytest.mark.parametrize("seed", range(4))
def test_a_pair_going_missing_only_widens(seed):
    rng = np.random.default_rng(seed)
    a = [bool(v) for v in rng.random(40) < 0.7]
    b = [bool(v) for v in rng.random(40) < 0.6]
    before = paired_proportion_difference(a, b)
    for i in rng.choice(40, 5, replace=False):
        gappy_a = [None if j == i else v for j, v in enumerate(a)]
        gappy_b = [None if j == i else v for j, v in enumerate(b)]
        for x, y in [(gappy_a, b), (a, gappy_b), (gappy_a, gappy_b)]:
            after = paired_proportion_difference(x, y)
            # Tolerance covers the bisection's last-bit differences.
            assert after.interval.lower <= before.interval.lower + 1e-9
            assert after.interval.upper >= before.interval.upper - 1e-9
            assert after.p_value >= before.p_value


def test_missing_candidate_counts_as_fail_for_lower_end():
    a, b = runs_from_table(40, 0, 0, 10)
    b_missing = [None if i < 5 else v for i, v in enumerate(b)]
    worst = [False if i < 5 else v for i, v in enumerate(b)]
    best = list(b)
    reported = paired_proportion_difference(a, b_missing)
    assert reported.interval.lower == paired_proportion_difference(a, worst).interval.lower
    assert reported.interval.upper == paired_proportion_difference(a, best).interval.upper


def test_paired_scores_reference_and_range():
    # A steady gain of 0.1 is 5 % of the difference range [-1, 1]: bounded
    # betting needs about 50 such pairs before it may exclude 0.
    a = [0.2, 0.4, 0.6, 0.8, 0.5] * 40
    b = [v + 0.1 for v in a]
    result = paired_mean_difference(a, b, 0.0, 1.0)
    assert result.difference == pytest.approx(np.mean(np.subtract(b, a)))
    assert result.interval.lower > 0
    assert result.p_value <= 0.05
    assert result.n_improved is None
    assert -1.0 <= result.interval.lower <= result.interval.upper <= 1.0


def test_paired_scores_p_value_agrees_with_interval():
    rng = np.random.default_rng(8)
    for shift in [0.0, 0.02, 0.05, 0.1]:
        a = rng.random(80)
        b = np.clip(a + shift + rng.normal(0, 0.1, 80), 0, 1)
        result = paired_mean_difference(list(a), list(b), 0.0, 1.0)
        assert (result.p_value <= 0.05) == (not result.interval.contains(0.0))


def test_paired_scores_missing_widen_and_validate():
    a = [3.0, 4.0, 5.0, 4.0] * 10
    b = [4.0, 4.0, 5.0, 5.0] * 10
    full = paired_mean_difference(a, b, 1.0, 5.0)
    gappy = paired_mean_difference([None, *a[1:]], [*b[:-1], None], 1.0, 5.0)
    assert gappy.interval.lower <= full.interval.lower + 1e-9
    assert gappy.interval.upper >= full.interval.upper - 1e-9
    assert gappy.n_missing == 2
    with pytest.raises(ValueError, match=r"a\[0\] = 6\.0"):
        paired_mean_difference([6.0], [1.0], 1.0, 5.0)
    with pytest.raises(ValueError, match="nan"):
        paired_mean_difference([float("nan")], [1.0], 1.0, 5.0)


# The coverage tests below use fixed seeds: deterministic. With a fresh seed, an interval
# covering exactly its nominal 95 % covers fewer than COVERED (1204) of REPS samples with
# probability 8e-5 (binomial tail); one covering 0.90 reaches COVERED with probability 6e-4.
REPS = 1300
COVERED = int(binom.ppf(1e-4, REPS, 0.95))


def simulated_coverage(unit_differences, true_difference):
    """How many of the samples (rows) the paired interval covers `true_difference` in."""
    bounds = bounded_mean_bounds(unit_differences) * 2.0 - 1.0
    return int(np.sum((bounds[:, 0] <= true_difference) & (true_difference <= bounds[:, 1])))


def test_public_function_uses_the_simulated_interval():
    rng = np.random.default_rng(4)
    a = rng.random(30) < 0.6
    b = rng.random(30) < 0.7
    bounds = bounded_mean_bounds(((b.astype(float) - a.astype(float) + 1) / 2)[None, :])[0]
    interval = paired_proportion_difference(list(a), list(b)).interval
    assert interval.lower == pytest.approx(2 * bounds[0] - 1, abs=1e-12)
    assert interval.upper == pytest.approx(2 * bounds[1] - 1, abs=1e-12)


@pytest.mark.parametrize("n", [10, 30, 100])
@pytest.mark.parametrize(("p_improved", "p_regressed"), [(0.05, 0.05), (0.02, 0.15), (0.25, 0.1)])
def test_paired_proportion_coverage(n, p_improved, p_regressed):
    rng = np.random.default_rng(n)
    draw = rng.random((REPS, n))
    d = np.where(draw < p_improved, 1.0, np.where(draw < p_improved + p_regressed, -1.0, 0.0))
    covered = simulated_coverage((d + 1) / 2, p_improved - p_regressed)
    assert covered >= COVERED, f"n={n}: coverage {covered / REPS:.3f}"


@functools.cache
def clipped_shift_truth():
    """True mean difference of the clipped model, E[clip(a + e, 0, 1) - a], by quadrature.

    a ~ Beta(2, 2), e ~ Normal(0.05, 0.15): given a, E[clip(y, 0, 1)] for y ~ N(m, s)
    is s (G(m / s) - G((m - 1) / s)) with G(z) = z Phi(z) + phi(z).
    """
    shift, spread = 0.05, 0.15

    def antiderivative(z):
        return z * norm.cdf(z) + norm.pdf(z)

    def clipped_mean(a):
        m = a + shift
        return spread * (antiderivative(m / spread) - antiderivative((m - 1) / spread))

    truth, _ = integrate.quad(lambda a: (clipped_mean(a) - a) * beta.pdf(a, 2, 2), 0, 1)
    return truth


@pytest.mark.parametrize("n", [10, 30, 100])
def test_paired_score_coverage(n):
    rng = np.random.default_rng(100 + n)
    a = rng.beta(2, 2, (REPS, n))
    b = np.clip(a + rng.normal(0.05, 0.15, (REPS, n)), 0, 1)
    covered = simulated_coverage((b - a + 1) / 2, clipped_shift_truth())
    assert covered >= COVERED, f"n={n}: coverage {covered / REPS:.3f}"


@pytest.mark.parametrize("n", [30, 100])
def test_coverage_holds_when_failures_go_missing(n):
    # Missing not at random: a candidate failure is hidden (missing) half the
    # time. Dropping those cases would inflate the candidate; bounding keeps
    # the interval valid for the true difference.
    rng = np.random.default_rng(7 + n)
    a = (rng.random((REPS, n)) < 0.7).astype(float)
    b = (rng.random((REPS, n)) < 0.6).astype(float)
    hidden = (b == 0.0) & (rng.random((REPS, n)) < 0.5)
    # Worst completion: hidden candidate verdicts fail; best: they pass.
    lower = bounded_mean_bounds((np.where(hidden, 0.0, b) - a + 1) / 2)[:, 0] * 2 - 1
    upper = bounded_mean_bounds((np.where(hidden, 1.0, b) - a + 1) / 2)[:, 1] * 2 - 1
    truth = 0.6 - 0.7
    assert np.sum((lower <= truth) & (truth <= upper)) >= COVERED
    # The public function computes the same interval.
    candidate = [None if h else bool(v) for v, h in zip(b[0], hidden[0], strict=True)]
    interval = paired_proportion_difference([bool(v) for v in a[0]], candidate).interval
    assert interval.lower == pytest.approx(lower[0], abs=1e-12)
    assert interval.upper == pytest.approx(upper[0], abs=1e-12)
