"""Holm and Benjamini–Hochberg: the library's procedures and their error rates."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import binom, false_discovery_control, norm

from oloproof_core.results.compare import compare_runs
from oloproof_core.stats import benjamini_hochberg, holm_rejections
from tests.support.synthetic_runs import make_run


@pytest.mark.parametrize("seed", range(5))
def test_bh_q_values_match_scipy_in_the_given_order(seed):
    rng = np.random.default_rng(seed)
    p = rng.random(12) ** 3
    p[3] = p[7]  # ties keep their q-value
    assert benjamini_hochberg(list(p)) == pytest.approx(false_discovery_control(p, method="bh"))
    assert benjamini_hochberg([]) == []


def test_holm_sits_between_bonferroni_and_no_correction():
    rng = np.random.default_rng(1)
    for _ in range(200):
        p = rng.random(8) ** 4
        holm = np.array(holm_rejections(list(p), 0.05))
        assert np.all(holm >= (p <= 0.05 / 8))  # at least Bonferroni's rejections
        assert np.all(holm <= (p <= 0.05))  # never more than each test alone
        # Step-down: a rejected p-value rejects every smaller one.
        if holm.any():
            assert np.all(holm[p <= p[holm].max()])


def test_holm_family_wise_and_bh_false_discovery_rates():
    # 20 hypotheses, 15 true nulls (uniform p-values, a shared component makes
    # them positively dependent), 5 clear effects.
    # Fixed seed: deterministic. With a fresh seed: Holm's family-wise error rate is at
    # most 0.05 under any dependence (0.043 here), so more than `most` (138) of 2000
    # replications with a false rejection has probability 9e-5 (binomial tail); a rate of
    # 0.08 fails with probability 0.96, no correction (0.41) always. BH's false discovery
    # rate is at most 15/20 * 0.05 = 0.0375 for these positively dependent p-values; a
    # mean of 2000 shares in [0, 1] exceeds it by 0.0225 with probability < 1e-5
    # (Bernstein), while BH at 0.1 (0.074) or no correction (0.10) fail with probability
    # > 0.9999.
    rng = np.random.default_rng(2)
    any_false_holm, false_share = 0, []
    reps = 2000
    for _ in range(reps):
        z = 0.5 * rng.standard_normal() + np.sqrt(0.75) * rng.standard_normal(15)
        null_p = norm.sf(z)
        p = np.concatenate((null_p, rng.random(5) * 1e-4))
        any_false_holm += any(holm_rejections(list(p), 0.05)[:15])
        flagged = np.array(benjamini_hochberg(list(p))) <= 0.05
        false_share.append(flagged[:15].sum() / max(1, flagged.sum()))
    most = binom.isf(1e-4, reps, 0.05)
    assert any_false_holm <= most
    assert float(np.mean(false_share)) <= 0.05 + 0.01


def test_compare_flags_on_q_values_unless_told_not_to():
    # Fixed seed: deterministic. With a fresh seed m0 (no effect) is flagged at most 5 %
    # of the time, its q-value being at least its p-value; 0 of 400 fresh seeds failed.
    rng = np.random.default_rng(3)
    n = 120
    base = {f"m{i}": list(rng.beta(2, 2, n)) for i in range(6)}
    shifts = [0.0, 0.0, 0.0, 0.0, 0.06, 0.2]
    cand = {
        name: list(np.clip(np.array(values) + shift + rng.normal(0, 0.05, n), 0, 1))
        for (name, values), shift in zip(base.items(), shifts, strict=True)
    }
    kinds = dict.fromkeys(base, "score")
    runs = make_run(base, value_types=kinds), make_run(cand, value_types=kinds)
    adjusted = compare_runs(*runs)
    plain = compare_runs(*runs, fdr=False)
    for name in base:
        q_row, p_row = adjusted.metric(name), plain.metric(name)
        assert q_row.p_value == p_row.p_value
        assert q_row.q_value is not None
        assert q_row.q_value >= q_row.p_value
        assert (q_row.flag is not None) <= (p_row.flag is not None)
    assert adjusted.metric("m5").flag == "improved"
    assert adjusted.metric("m0").flag is None
