"""Evaluators per turn and per conversation: a per-turn evaluator judges each turn as the
system saw it (cached like any verdict, contained like any code), and the conversation
gets one verdict folded from its turns'; a per-conversation one sees the whole."""

from __future__ import annotations

import pytest

from oloproof import DeclarationError, evaluate, system
from oloproof.evaluators import Contains, ExactMatch, RubricJudge, evaluator
from oloproof_core import InMemoryStore
from oloproof_core.cases.verdict import Verdict
from oloproof_core.judging.turns import folded


@system(name="labeller", version="1")
def labeller(case):
    text = case["messages"][-1]["content"]
    label = "refund" if "refund" in text else "other"
    return {"content": f"That is a {label} question.", "label": label}


def user(text: str) -> dict:
    return {"role": "user", "content": text}


ROWS = [
    {"id": "right", "input": {"turns": [user("hello"), user("a refund please")]},
     "expected": {"turns": [{"label": "other"}, {"label": "refund"}]}},
    {"id": "wrong", "input": {"turns": [user("refund"), user("hi"), user("refund now")]},
     "expected": {"turns": [{"label": "refund"}, {"label": "refund"}, {"label": "refund"}]}},
    {"id": "single", "input": {"messages": [user("a refund")]}, "expected": {"label": "refund"}},
]  # fmt: skip
PER_TURN = ExactMatch(criterion="turn_label", field="label", per_turn=True)


def by_id(result):
    return {case.id: case for case in result.cases}


def test_a_per_turn_evaluator_folds_its_turns_into_the_conversations_verdict():
    result = evaluate(labeller, ROWS, [PER_TURN], store=InMemoryStore(), isolation="thread")

    cases = by_id(result)
    right, wrong, single = (cases[i].verdicts["turn_label"] for i in ("right", "wrong", "single"))
    assert (right.value, dict(right.scores)) == (1.0, {"turns_passed": 1.0})
    assert right.feedback == "turn 1: passed\nturn 2: passed"
    assert wrong.value == 0.0
    assert wrong.scores["turns_passed"] == pytest.approx(2 / 3)
    assert wrong.feedback == (
        "turn 1: passed\nturn 2: failed — Expected 'refund', got 'other'.\nturn 3: passed"
    )
    assert (single.value, dict(single.scores)) == (1.0, {"turns_passed": 1.0})
    # The conversation is the unit: three cases observed, two passed.
    metric = result.metric("turn_label")
    assert (metric.n_observed, metric.estimate) == (3, pytest.approx(2 / 3))
    assert result.metric("turn_label.turns_passed").estimate == pytest.approx((1 + 2 / 3 + 1) / 3)


def test_turn_verdicts_are_cached_so_a_second_run_judges_nothing():
    store = InMemoryStore()
    seen = []

    @evaluator(criterion="polite_turn", reads=("output",), per_turn=True)
    def polite_turn(case):
        seen.append(case.output["content"])
        return case.output["content"].startswith("That is")

    evaluate(labeller, ROWS, [polite_turn], store=store, isolation="thread")
    # Six turns, four distinct replies: each distinct reply judged once.
    assert sorted(seen) == ["That is a other question.", "That is a refund question."]
    again = evaluate(labeller, ROWS, [polite_turn], store=store, isolation="thread")

    assert len(seen) == 2
    assert all(case.verdicts["polite_turn"].cached for case in again.cases)
    assert all(case.verdicts["polite_turn"].passed for case in again.cases)


def test_each_turn_is_judged_as_the_system_saw_it_in_its_own_process():
    result = evaluate(labeller, ROWS[:2], [saw_history, whole], store=InMemoryStore(), record=False)

    wrong = by_id(result)["wrong"]
    assert wrong.verdicts["saw_history"].passed, wrong.verdicts["saw_history"]
    assert wrong.verdicts["saw_history"].scores["turns_passed"] == 1.0
    assert wrong.verdicts["whole"].value == 3.0
    assert "saw_history" in result.provenance["evaluator_execution"]["evaluators"]
    assert result.provenance["judging"]["saw_history"]["judged"] == 5  # the turns, 2 + 3
    assert result.provenance["evaluators"][0]["per_turn"] is True
    assert "per_turn" not in result.provenance["evaluators"][1]


@evaluator(criterion="saw_history", reads=("input", "output"), per_turn=True)
def saw_history(case):
    messages = case.input["messages"]
    return len(messages) % 2 == 1 and messages[-1]["role"] == "user" and "label" in case.output


@evaluator(criterion="whole", reads=("output",), value_type="score", score_range=(0, 10))
def whole(case):
    return len(case.output["replies"])


def test_per_turn_is_part_of_the_version_and_refused_for_whole_conversation_parts():
    plain = ExactMatch(criterion="turn_label", field="label")
    assert plain.version != PER_TURN.version
    assert plain.version == ExactMatch(criterion="turn_label", field="label").version
    assert RubricJudge(criterion="kind", rubric="Be kind.", per_turn=True).per_turn
    assert Contains(criterion="c", value="x", per_turn=True).describe()["per_turn"] is True

    with pytest.raises(DeclarationError, match="'measurements' is measured for the whole"):
        evaluator(criterion="fast", reads=("measurements",), per_turn=True)(lambda case: True)
    with pytest.raises(DeclarationError, match="per_turn must be True or False"):
        ExactMatch(criterion="x", per_turn="yes")  # type: ignore[arg-type]


def test_a_missing_turn_verdict_makes_the_conversations_missing_naming_the_turn():
    score = ExactMatch(criterion="s")
    verdict = folded(score, [Verdict(1.0), Verdict.failed_to_judge("KeyError: 'label'")])

    assert verdict.missing
    assert verdict.error == "turn 2: KeyError: 'label'"


def test_a_score_per_turn_is_the_mean_of_the_turns():
    @evaluator(criterion="length", reads=("output",), value_type="score", per_turn=True)
    def length(case):
        return 0.5

    verdict = folded(
        length,
        [Verdict(0.2, "short", {"tone": 1.0}), Verdict(0.6, None, {"tone": 0.0}), Verdict(1.0)],
    )

    assert verdict.value == pytest.approx(0.6)
    assert dict(verdict.scores) == {"tone": 0.5}
    assert verdict.feedback == "turn 1: scored 0.2 — short\nturn 2: scored 0.6\nturn 3: scored 1"
