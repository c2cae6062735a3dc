"""Never-passing rules, Holm across rules, readouts by whole repeats, and power figures."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import binom

from oloproof_core.gates import PolicyError, load_policy
from oloproof_core.stats import betting_cases_for_power, proportion_cases_for_power
from tests.support.synthetic_runs import make_run


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
    from oloproof_core.evaluators import ExactMatch

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
    # false-fail rate stays at 2.5 %. Exact per rule, so simulate counts only.
    rng = np.random.default_rng(10)
    n, threshold, reps = 200, 0.8, 40
    rules = [{"metric": f"m{i}", "min": threshold} for i in range(10)]
    holm, plain = policy(*rules), policy(*rules, multiplicity="none")
    failed_holm = failed_plain = 0
    for _ in range(reps):
        values = {f"m{i}": list((rng.random(n) < threshold).astype(float)) for i in range(10)}
        run = make_run(values)
        failed_holm += holm.decide(run).outcome == "fail"
        failed_plain += plain.decide(run).outcome == "fail"
    # bench/README.md has the figures from many more replications.
    assert failed_holm <= 3
    assert failed_plain >= failed_holm


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
    rng = np.random.default_rng(4)
    sd, effect, threshold = 0.15, 0.05, 0.7
    n = betting_cases_for_power(sd, effect)
    assert n is not None
    rule = policy({"metric": "s", "min": threshold})
    passes = 0
    reps = 150
    for _ in range(reps):
        values = np.clip(rng.normal(threshold + effect, sd, n), 0, 1)
        passes += rule.decide(make_run({"s": list(values)}, value_types={"s": "score"})).passed
    assert 0.65 <= passes / reps <= 0.97


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
