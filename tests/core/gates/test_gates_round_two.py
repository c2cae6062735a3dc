"""Never-passing rules, Holm across rules, readouts by whole repeats, and power figures."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import binom

from oloproof_core.gates import PolicyError, load_policy
from oloproof_core.stats import (
    betting_cases_for_power,
    bounded_mean_bounds,
    proportion_cases_for_power,
)
from tests.support.synthetic_runs import make_run, pass_fail


def policy(*rules, **top):
    return load_policy({"version": 1, "rules": list(rules), **top})


@pytest.mark.parametrize(
    ("rule", "message"),
    [
        ({"metric": "m", "min": 1}, "rules[0].min: 1 can never pass"),
        ({"metric": "m", "max": 0}, "rules[0].max: 0 can never pass"),
    ],
)
def test_rules_that_can_never_pass_are_refused(rule, message):
    run = make_run({"m": [1.0] * 30})
    with pytest.raises(PolicyError, match=message.replace("[", r"\[").replace("]", r"\]")):
        policy(rule).decide(run)


def test_never_passing_rules_are_refused_before_the_run(tmp_path):
    from oloproof_core import InMemoryStore, run_evaluation
    from oloproof_core.judging.evaluators import ExactMatch

    path = tmp_path / "release.yaml"
    path.write_text("version: 1\nrules:\n  - metric: exact_label\n    min: 1\n")
    calls = []

    def system(payload):
        calls.append(payload)
        return {"label": "x"}

    with pytest.raises(PolicyError, match=r"release.yaml:3: rules\[0\].min: 1 can never pass"):
        run_evaluation(
            system=system,
            dataset=[{"id": "a", "input": {}, "expected": {"label": "x"}}],
            evaluators=[ExactMatch(criterion="exact_label", field="label")],
            store=InMemoryStore(),
            policy=str(path),
            record=False,
        )
    assert calls == []


@pytest.mark.parametrize("options", ["{margin: 0}", "{}", "true"])
def test_no_regression_without_a_positive_margin_is_refused(tmp_path, options):
    path = tmp_path / "release.yaml"
    path.write_text(f"version: 1\nrules:\n  - metric: m\n    no_regression: {options}\n")
    with pytest.raises(PolicyError, match=r"release.yaml:4: rules\[0\].no_regression"):
        load_policy(str(path))


def test_holm_keeps_the_false_fail_rate_of_ten_rules_at_the_threshold():
    # Ten pass/fail metrics whose true rate sits exactly at the threshold. Alone,
    # each fails 2.5 % of the time and the gate ~22 %; with Holm the gate's
    # false-fail rate stays at 2.5 %. Exact, not simulated (no randomness, so it cannot
    # fail by chance): Holm's first step fails the gate exactly when some rule fails at
    # its level with all ten rules counted, whatever the other rules' counts, so for ten
    # independent counts the rate is 1 - (1 - P(one count fails the gate alone))^10.
    # A gate without Holm (0.21) or one confirming a lone failure fails this for certain.
    n, threshold = 200, 0.8
    rules = [{"metric": f"m{i}", "min": threshold} for i in range(10)]
    holm, plain = policy(*rules), policy(*rules, multiplicity="none")

    def outcome(gate, counts):
        values = {f"m{i}": pass_fail(k, n - k) for i, k in enumerate(counts)}
        return gate.decide(make_run(values)).outcome

    def false_fail_rate(failing, below=0.0):
        one = below + float(binom.pmf(failing, n, threshold).sum())
        return 1.0 - (1.0 - one) ** 10

    # Above threshold * n the estimate clears the threshold, so only counts up to it can
    # fail; counts under 120 (probability 3e-11) are taken to fail where that is the
    # cautious side (Holm's rate) and to pass where it is (the plain gate's).
    counts = range(120, int(threshold * n) + 1)
    holm_fails = [k for k in counts if outcome(holm, [k] + [n] * 9) == "fail"]
    plain_fails = [k for k in counts if outcome(plain, [k] + [n] * 9) == "fail"]
    assert set(holm_fails) <= set(plain_fails)
    assert false_fail_rate(holm_fails, below=float(binom.cdf(119, n, threshold))) <= 0.025
    assert false_fail_rate(plain_fails) > 0.15
    # The other rules' counts do not change that: ten lone failures confirm none of
    # them, and one failure at the Holm level fails the gate among nine lone ones.
    confirmed, alone = max(holm_fails), max(plain_fails)
    assert outcome(holm, [alone] * 10) == "inconclusive"
    assert outcome(holm, [confirmed] + [alone] * 9) == "fail"
    assert outcome(holm, [confirmed + 1] + [alone] * 9) == "inconclusive"


def test_holm_turns_an_unconfirmed_failure_inconclusive():
    # Exactly at the edge for one rule alone: 22 of 30 pass against min 0.9.
    run = make_run({"a": [1.0] * 25 + [0.0] * 5, "b": [1.0] * 30})
    alone = policy({"metric": "a", "min": 0.99}, multiplicity="none").decide(run)
    both = policy({"metric": "a", "min": 0.99}, {"metric": "b", "min": 0.5}).decide(run)
    assert alone.rules[0].outcome == "fail"
    assert both.rules[0].outcome in ("fail", "inconclusive")
    if both.rules[0].outcome == "inconclusive":
        assert "Holm" in both.rules[0].reason


def test_score_readout_projects_whole_repeats_that_do_decide():
    rng = np.random.default_rng(3)
    scores = list(rng.beta(8, 2, 100))
    mean = float(np.mean(scores))
    rule = {"metric": "s", "min": round(mean + 0.01, 4)}
    gate = policy(rule).decide(make_run({"s": scores}, value_types={"s": "score"}))
    more = gate.rules[0].more_cases
    assert gate.outcome == "inconclusive"
    assert more is not None
    assert more.count is not None
    assert more.count % 100 == 0
    copies = more.count // 100 + 1
    bigger = make_run(
        {"s": scores * copies},
        value_types={"s": "score"},
        ids=[f"case_{i:04d}#{r}" for r in range(copies) for i in range(100)],
    )
    assert policy(rule).decide(bigger).rules[0].outcome == "fail"


def test_readout_exists_at_the_threshold():
    run = make_run({"m": [1.0] * 45 + [0.0] * 5})
    gate = policy({"metric": "m", "min": 0.9}, effect=0.05).decide(run)
    more = gate.rules[0].more_cases
    assert more is not None
    assert more.count is None
    assert more.power_cases == proportion_cases_for_power(0.95, 0.9)
    assert more.power_effect == pytest.approx(0.05)


def test_exact_power_formula_reaches_80_percent():
    n = proportion_cases_for_power(0.9, 0.8)
    assert n is not None
    k_needed = binom.isf(0.025, n, 0.8) + 1
    assert binom.sf(k_needed - 1, n, 0.9) >= 0.8
    k_before = binom.isf(0.025, n - 1, 0.8) + 1
    assert binom.sf(k_before - 1, n - 1, 0.9) < 0.8


def test_betting_power_formula_is_close_by_simulation():
    # The rule reads the betting interval in the order of its cases' ids, so the runs are
    # bounded at once with those ids as keys, and the first five are decided by the gate.
    # Fixed seed: deterministic. The formula is a normal approximation: at its n (114)
    # the gate passes 0.70 of the time (40,000 runs), so with a fresh seed the share of
    # 2000 runs leaves [0.65, 0.97] with probability 6e-6 (binomial tails, taking the
    # power as low as 0.6955). A formula asking two thirds of those cases (power 0.31)
    # or twice as many (0.989) fails with probability > 0.9999.
    rng = np.random.default_rng(4)
    sd, effect, threshold = 0.15, 0.05, 0.7
    n = betting_cases_for_power(sd, effect)
    assert n is not None
    rule = policy({"metric": "s", "min": threshold})
    values = np.clip(rng.normal(threshold + effect, sd, (2000, n)), 0, 1)
    lower = bounded_mean_bounds(values, keys=[f"case_{i:04d}" for i in range(n)])[:, 0]
    for row in range(5):
        gate = rule.decide(make_run({"s": list(values[row])}, value_types={"s": "score"}))
        assert gate.rules[0].figures["lower"] == pytest.approx(lower[row], abs=1e-12)
        assert gate.passed == (lower[row] >= threshold)
    assert 0.65 <= float(np.mean(lower >= threshold)) <= 0.97


def test_sequential_gate_reads_the_anytime_valid_interval():
    run = make_run({"m": [1.0] * 85 + [0.0] * 15})
    fixed = policy({"metric": "m", "min": 0.8}).decide(run).rules[0]
    rule = policy({"metric": "m", "min": 0.8}, sequential={"batch": 20})
    later = rule.decide(run, horizon=400).rules[0]
    assert "anytime-valid" in later.figures["method"]
    assert later.figures["lower"] != fixed.figures["lower"]
    # A prefix of the cases in reading order is decided on its own sequence.
    first = make_run({"m": [1.0] * 10}, ids=[f"case_{i:04d}" for i in range(10)])
    assert rule.decide(first, horizon=400).outcome == "inconclusive"
