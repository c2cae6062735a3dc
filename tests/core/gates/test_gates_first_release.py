"""A first release under `baseline: {last_approved: true}`: nothing approved to compare with.

The run is decided on its other rules; the no_regression rule says what the policy's
`on_first_release` says (inconclusive by default) and names the missing baseline. A
baseline that must exist (a file, a named release) is resolved before the first case.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from oloproof_core import InMemoryStore, run_evaluation, system
from oloproof_core.gates import PolicyError, load_policy
from oloproof_core.judging.evaluators import ExactMatch
from tests.support.synthetic_runs import make_run, pass_fail

README_POLICY = """\
version: 1
baseline: {last_approved: true}
rules:
  - metric: exact_label
    min: 0.9
  - missing: {max_count: 0}
  - metric: exact_label
    no_regression: {margin: 0.02}
"""


class NothingApproved:
    """A store of recorded runs in which no run of the system has been approved."""

    def __init__(self) -> None:
        self.asked: list[tuple[str, str | None]] = []

    def find_baseline(self, system_name: str, release: str | None) -> None:
        self.asked.append((system_name, release))


def policy_file(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "release.yaml"
    path.write_text(text, encoding="utf-8")
    return path


def test_the_readme_policy_decides_a_first_release_with_the_rule_inconclusive(
    tmp_path: Path,
) -> None:
    store = NothingApproved()
    run = make_run({"exact_label": pass_fail(300, 0)})

    gate = load_policy(policy_file(tmp_path, README_POLICY)).decide(run, store=store)

    assert store.asked == [("support-bot", None)]
    assert [rule.outcome for rule in gate.rules] == ["pass", "pass", "inconclusive"]
    assert gate.outcome == "inconclusive"
    waiting = gate.rules[2]
    assert "no approved run of support-bot to compare with yet" in waiting.reason
    assert waiting.figures["first_release"] is True
    assert waiting.more_cases is not None
    assert "no number of cases settles it" in waiting.more_cases.note
    assert not gate.more_cases_may_settle
    assert gate.baseline is None


@pytest.mark.parametrize(("reading", "outcome"), [("pass", "pass"), ("fail", "fail")])
def test_on_first_release_says_how_the_rule_reads(
    tmp_path: Path, reading: str, outcome: str
) -> None:
    text = README_POLICY.replace("rules:", f"on_first_release: {reading}\nrules:")
    policy = load_policy(policy_file(tmp_path, text))
    gate = policy.decide(make_run({"exact_label": pass_fail(300, 0)}), store=NothingApproved())
    assert gate.rules[2].outcome == outcome
    assert gate.outcome == outcome
    assert f"on_first_release: {reading}" in gate.rules[2].reason
    assert policy.describe()["on_first_release"] == reading


def test_other_rules_still_decide_a_first_release(tmp_path: Path) -> None:
    failing = make_run({"exact_label": pass_fail(200, 100)})
    gate = load_policy(policy_file(tmp_path, README_POLICY)).decide(
        failing, store=NothingApproved()
    )
    assert gate.rules[0].outcome == "fail"
    assert gate.outcome == "fail"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            README_POLICY.replace("rules:", "on_first_release: maybe\nrules:"),
            "on_first_release: must be one of pass, inconclusive, fail",
        ),
        (
            README_POLICY.replace("{last_approved: true}", "{run: v1.json}").replace(
                "rules:", "on_first_release: pass\nrules:"
            ),
            "applies only to 'baseline: {last_approved: true}'",
        ),
    ],
)
def test_on_first_release_is_checked_when_the_policy_loads(
    tmp_path: Path, text: str, message: str
) -> None:
    with pytest.raises(PolicyError, match=message.replace("{", r"\{").replace("}", r"\}")):
        load_policy(policy_file(tmp_path, text))


def counting_system(calls: list[Any]) -> Any:
    @system(name="support-bot", version="2")
    def answer(case: dict[str, Any]) -> dict[str, str]:
        calls.append(case)
        return {"label": "refund"}

    return answer


@pytest.mark.parametrize(
    ("baseline", "message"),
    [
        ("{run: nowhere.json}", "baseline.run: cannot load the baseline"),
        ("{release: 'support-bot@9'}", "no recorded run of support-bot@9"),
    ],
)
def test_a_baseline_that_is_not_there_stops_the_run_before_its_first_case(
    tmp_path: Path, baseline: str, message: str
) -> None:
    calls: list[Any] = []
    policy = policy_file(tmp_path, README_POLICY.replace("{last_approved: true}", baseline))
    rows = [{"id": f"c{i}", "input": {"q": i}, "expected": {"label": "refund"}} for i in range(5)]
    with pytest.raises(PolicyError, match=message):
        run_evaluation(
            system=counting_system(calls),
            dataset=rows,
            evaluators=[ExactMatch(criterion="exact_label", field="label")],
            store=InMemoryStore(),
            policy=str(policy),
            isolation="thread",
        )
    assert calls == []


def test_a_first_release_runs_and_is_decided_in_memory(tmp_path: Path) -> None:
    calls: list[Any] = []
    rows = [{"id": f"c{i}", "input": {"q": i}, "expected": {"label": "refund"}} for i in range(5)]
    result = run_evaluation(
        system=counting_system(calls),
        dataset=rows,
        evaluators=[ExactMatch(criterion="exact_label", field="label")],
        store=InMemoryStore(),
        policy=str(policy_file(tmp_path, README_POLICY)),
        isolation="thread",
    )
    assert len(calls) == 5
    assert result.gate is not None
    assert result.gate.rules[2].outcome == "inconclusive"
