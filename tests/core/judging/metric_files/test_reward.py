"""reward(): REWARD_SPEC validation key by key, and the documented formulas."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from oloproof import evaluate, system
from oloproof.evaluators import MetricFile, evaluator
from oloproof_core.cases.rewards import RewardSpecError, check_reward_spec, half_at_reference
from oloproof_core.errors import ContractError
from skynet import observation, reward, service_cost

SPEC = {
    "weights": {"accuracy": 0.7, "speed": 0.2, "cost": 0.1},
    "accuracy": {},
    "speed": {"reference": 2000},
    "cost": {"reference": 0.01},
}


def spec_with(**changes):
    spec = {key: dict(value) for key, value in SPEC.items()}
    for dotted, value in changes.items():
        section, _, key = dotted.partition("__")
        if key:
            spec[section][key] = value
        else:
            spec[section] = value
    return spec


@pytest.mark.parametrize(
    ("spec", "fragment"),
    [
        ([1, 2], "it must be a dict"),
        ({**SPEC, "latency": {}}, "unknown key 'latency'"),
        ({key: value for key, value in SPEC.items() if key != "weights"}, "missing key 'weights'"),
        (spec_with(weights={"accuracy": 1, "speed": 1}), "missing key 'weights.cost'"),
        (spec_with(weights__quality=1), "unknown key 'weights.quality'"),
        (spec_with(weights__speed=-0.1), "'weights.speed' must be a number of 0 or more"),
        (spec_with(weights__cost="0.1"), "'weights.cost' must be a number of 0 or more"),
        (spec_with(weights={"accuracy": 0, "speed": 0, "cost": 0}), "all weights are 0"),
        (spec_with(speed={}), "missing key 'speed.reference' (a positive number in milliseconds)"),
        (
            spec_with(speed__reference=0),
            "'speed.reference' must be a positive number in milliseconds, got 0",
        ),
        (
            spec_with(cost__reference=-1),
            "'cost.reference' must be a positive number in US dollars, got -1",
        ),
        (spec_with(accuracy__reference=0), "'accuracy.reference' must be a positive number"),
        (spec_with(speed__target=1), "unknown key 'speed.target'"),
        (spec_with(cost=0.01), "'cost' must be a dict"),
    ],
)
def test_bad_specs_name_the_offending_key(spec, fragment):
    with pytest.raises(RewardSpecError) as caught:
        check_reward_spec(spec)
    assert fragment in str(caught.value)
    assert "A valid spec looks like" in str(caught.value)


def test_weights_are_rescaled_to_sum_to_one():
    checked = check_reward_spec(spec_with(weights={"accuracy": 7, "speed": 2, "cost": 1}))
    assert checked.weights == pytest.approx({"accuracy": 0.7, "speed": 0.2, "cost": 0.1})


def test_a_zero_weight_part_needs_no_reference():
    spec = spec_with(weights={"accuracy": 1, "speed": 0, "cost": 0}, speed={}, cost={})
    value, info = reward(spec, 0.8, "Close.")
    assert value == pytest.approx(0.8)
    assert info == {"feedback": "Close.", "scores": {"accuracy": 0.8, "speed": 0.0, "cost": 0.0}}


def test_formula_is_one_at_zero_half_at_the_reference_and_monotone():
    assert half_at_reference(0, 2000) == 1.0
    assert half_at_reference(2000, 2000) == 0.5
    assert half_at_reference(4000, 2000) == pytest.approx(1 / 3)
    figures = [0, 1, 10, 100, 2000, 10_000, 1e9]
    scores = [half_at_reference(x, 2000) for x in figures]
    assert scores == sorted(scores, reverse=True)
    assert all(0 < s <= 1 for s in scores)


def test_accuracy_reference_turns_accuracy_into_an_error_where_lower_is_better():
    spec = spec_with(weights={"accuracy": 1, "speed": 0, "cost": 0}, accuracy__reference=5)
    assert reward(spec, 0, "exact")[1]["scores"]["accuracy"] == 1.0
    assert reward(spec, 5, "off by 5")[1]["scores"]["accuracy"] == 0.5
    assert reward(spec, 15, "off by 15")[0] == pytest.approx(0.25)
    with pytest.raises(ContractError, match="is an error"):
        reward(spec, -1, "negative")


def test_accuracy_without_reference_must_be_a_0_to_1_score():
    with pytest.raises(ContractError, match=r"outside 0..1.*accuracy'\] = \{'reference'"):
        reward(SPEC, 3, "three")


def test_outside_a_case_speed_and_cost_are_unmeasurable_and_say_so():
    value, info = reward(SPEC, 1.0, "Correct.")
    assert value == pytest.approx(0.7)
    assert info["scores"] == {"accuracy": 1.0, "speed": 0.0, "cost": 0.0}
    assert info["feedback"] == (
        "Correct. Speed could not be measured (no timing for this case), so it scored 0. "
        "Cost could not be measured (a model call had no price), so it scored 0."
    )


def test_observation_and_service_cost_read_the_engine_measurements(tmp_path):
    @system(name="slow", version="1")
    def slow(case):
        import time

        time.sleep(0.01)
        return "x"

    @evaluator(criterion="watch", reads=("measurements",))
    def watch(case):
        import json  # it judges in a process of its own: what it saw comes back as feedback

        seen = {
            "observation": observation().to_dict(),
            "service_cost": service_cost(),
            "view": case.measurements.to_dict(),
            "calls": list(observation().model_calls),
        }
        return True, json.dumps(seen)

    result = evaluate(slow, [{"id": "a", "input": {}}], [watch])

    (case,) = result.cases
    seen = json.loads(case.verdicts["watch"].feedback)
    assert seen["observation"]["latency_ms"] == case.latency_ms >= 10
    assert seen["observation"] == seen["view"]
    assert seen["service_cost"] == 0.0  # no model calls: measured, and free
    assert seen["calls"] == []


def test_observation_outside_a_case_is_a_clear_error():
    with pytest.raises(Exception, match="outside a case"):
        observation()


SEED_METRIC = Path(__file__).parent / "seed_metrics" / "accuracy_speed_cost" / "metric.py"


def test_a_clock_the_system_could_reach_earns_no_speed_or_cost_credit(monkeypatch):
    """A system run in this process (isolation="thread", trusted code) can stop the
    engine's clock: its figures are its own word, so speed and cost score 0 and say why."""
    real = time.perf_counter
    monkeypatch.setattr(time, "perf_counter", real)  # put back after the test

    @system(name="clock-stopper", version="1")
    def stopper(case):
        frozen = real()
        time.sleep(0.05)
        time.perf_counter = lambda: frozen  # the engine reads its end time from this
        return "refund"

    rows = [{"id": "a", "input": {}, "expected": {"label": "refund"}}]
    result = evaluate(
        stopper, rows, [MetricFile(SEED_METRIC, criterion="asc")], record=False, isolation="thread"
    )

    assert result.provenance["execution"]["measurements"] == "not protected"
    (case,) = result.cases
    assert case.latency_ms < 1  # the stopped clock did fool the timing ...
    verdict = case.verdicts["asc"]
    assert verdict.scores == {"accuracy": 1.0, "speed": 0.0, "cost": 0.0}  # ... not the score
    assert verdict.value == pytest.approx(0.7)
    assert "Speed and cost scored 0" in verdict.feedback
    assert "isolation='thread'" in verdict.feedback


def test_a_process_without_a_sandbox_earns_no_speed_or_cost_credit():
    """A process of its own but no sandbox could reach this process through /proc."""
    from tests.core.execution.isolation.systems import quick_pid

    rows = [{"id": "a", "input": {"n": 1}, "expected": {"label": "refund"}}]
    metric = MetricFile(SEED_METRIC, criterion="asc")
    result = evaluate(quick_pid, rows, [metric], record=False, sandbox="off")

    execution = result.provenance["execution"]
    assert (execution["isolation"], execution["sandbox"]["on"]) == ("process", False)
    verdict = result.cases[0].verdicts["asc"]
    assert (verdict.scores["speed"], verdict.scores["cost"]) == (0.0, 0.0)
    assert "without a sandbox" in verdict.feedback
