"""A system in its own process cannot change what the parent measures or sees."""

from __future__ import annotations

import os
import time

from oloproof import evaluate, system
from oloproof.evaluators import evaluator
from tests.core.execution.isolation import systems

ROWS = [
    {"id": f"c{i}", "input": {"n": i}, "expected": {"n": i, "secret": "expected-only"}}
    for i in range(8)
]
SAME_N = evaluator(criterion="same_n", reads=("output", "expected"))(
    lambda case: case.output["n"] == case.expected["n"]
)


def run(target, rows=ROWS, **options):
    return evaluate(target, rows, [SAME_N], record=False, **options)


def test_patching_the_clocks_in_the_system_does_not_change_the_latency():
    result = run(systems.clock_cheat)

    assert result.provenance["execution"]["isolation"] == "process"
    assert all(case.error is None for case in result.cases)
    assert all(20 <= case.latency_ms < 5000 for case in result.cases)
    assert time.perf_counter() > 0  # the parent's clock is untouched


def test_editing_the_case_record_in_the_system_changes_nothing_recorded():
    result = run(systems.record_cheat)

    assert [case.id for case in result.cases] == [row["id"] for row in ROWS]
    assert all(20 <= case.latency_ms < 5000 for case in result.cases)
    assert result.metric("same_n").n_observed == len(ROWS)


def test_the_system_never_receives_expected_and_its_artifacts_come_back(capfd):
    result = run(systems.probe, concurrency=2)

    for case in result.cases:
        assert case.error is None, case.error
        assert case.output["keys"] == ["n"]
        assert case.output["refused"] is True
        assert case.output["record_expected"] is None
        assert case.output["pid"] != os.getpid()
        assert case.artifacts == {"trace": {"steps": ["read", "answer"], "id": case.id}}
        assert case.expected["secret"] == "expected-only"  # the parent still has it
    captured = capfd.readouterr()
    assert "a system printing to stdout" not in captured.out
    assert "a system printing to stdout" in captured.err


def test_provider_keys_stay_out_of_the_system_process(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-parent")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-parent")
    monkeypatch.setenv("OLOPROOF_SYSTEM_API_KEY", "sk-system")
    monkeypatch.setenv("DATABASE_URL", "postgres://user:password@db/oloproof")
    monkeypatch.setenv("OLOPROOF_ISOLATION_TEST", "kept")  # named by the operator: passed
    monkeypatch.setenv("OLOPROOF_SYSTEM_ENV", "OLOPROOF_ISOLATION_TEST")

    (case, *_) = run(systems.environment).cases

    # The model keys a system sees are the gateway's own: its case's, and its process's.
    case_key = case.output.pop("OPENAI_API_KEY")
    process_key = case.output.pop("OLOPROOF_SYSTEM_API_KEY")
    assert case_key.startswith("olo-gw-")
    assert process_key.startswith("olo-gw-")
    assert case_key != process_key
    assert case.output == {
        "ANTHROPIC_API_KEY": None,
        "DATABASE_URL": None,
        "OLOPROOF_ISOLATION_TEST": "kept",
        "HOME_OF_TESTS": None,
        "n": 0,
    }


def test_the_warm_up_hook_runs_once_per_process_before_any_case():
    result = run(systems.warm, concurrency=2)

    for case in result.cases:
        assert len(case.output["warmed"]) == 1
    assert len({case.output["warmed"][0] for case in result.cases}) <= 2
    assert result.provenance["execution"]["processes"] == 2


def test_an_async_systems_concurrency_is_its_processes_one_case_each():
    rows = [{"id": f"a{i}", "input": {"n": i}, "expected": {"n": i}} for i in range(16)]
    result = run(systems.async_sleep, rows, concurrency=4)

    assert result.metric("same_n").n_observed == 16
    execution = result.provenance["execution"]
    assert (execution["processes"], execution["cases_per_process"]) == (4, 1)
    assert all(50 <= case.latency_ms < 1000 for case in result.cases)


def test_thread_isolation_runs_here_and_says_measurements_are_not_protected():
    result = run(systems.probe, isolation="thread")

    assert result.provenance["execution"] == {
        "isolation": "thread",
        "measurements": "not protected",
    }
    assert all(case.output["pid"] == os.getpid() for case in result.cases)


def test_a_closure_travels_by_value_to_a_sandboxed_process():
    @system(name="closure", version="1")
    def closure(case):
        return {"n": case["n"], "pid": os.getpid()}

    result = run(closure)

    execution = result.provenance["execution"]
    assert execution["isolation"] == "process"
    assert execution["start"] == "value"
    assert execution["measurements"] == "protected"
    assert execution["sandbox"]["on"] is True
    assert all(case.output["pid"] != os.getpid() for case in result.cases)
