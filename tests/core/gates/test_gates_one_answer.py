"""An undecided rule says one number of cases: its line of `oloproof plan` for the run."""

from __future__ import annotations

from oloproof_core.gates import load_policy, plan_cases
from tests.support.synthetic_runs import make_run, pass_fail


def test_each_undecided_rule_says_its_line_of_the_plan_in_summary_and_reason() -> None:
    scores = [0.55 + 0.1 * (i % 5) / 4 for i in range(30)]
    run = make_run(
        {"exact_label": pass_fail(30, 0), "quality": scores},
        value_types={"quality": "score"},
    )
    policy = load_policy(
        {
            "version": 1,
            "rules": [
                {"metric": "exact_label", "min": 0.9},
                {"metric": "quality", "min": 0.6},
                {"missing": {"max_count": 10}},
            ],
        }
    )
    gate = policy.decide(run)
    planned = {line.rule: line.cases for line in plan_cases(policy, result=run).rules}
    undecided = [rule for rule in gate.rules if rule.outcome == "inconclusive"]
    assert [rule.rule for rule in undecided] == ["exact_label ≥ 0.9", "quality ≥ 0.6"]
    for rule in undecided:
        cases = planned[rule.rule]
        assert cases is not None
        assert rule.more_cases is not None
        assert rule.more_cases.plan is not None
        assert rule.more_cases.plan["cases"] == cases
        said = f"about {cases:,} cases in all for an 80 % chance of passing"
        assert rule.summary.endswith(said)
        assert f"about {cases:,} cases in all give it an 80 % chance of passing" in rule.reason
        assert f"({rule.summary})" in str(gate)
        # The projection stays in the data, and is not said.
        assert "more cases needed" not in str(gate)
        assert "at the observed rate" not in rule.reason
