from __future__ import annotations

import asyncio
import threading
import time

import pytest

from oloproof import DeclarationError, current_case, evaluate, system
from oloproof.evaluators import ExactMatch, evaluator

ROWS = [{"id": f"c{i}", "input": {"n": i}, "expected": {"n": i}} for i in range(40)]
ECHO = ExactMatch(criterion="echo", field="n")


def test_async_systems_run_concurrently_up_to_the_limit(store):
    in_flight = 0
    peak = 0

    @system(name="async-echo", version="1")
    async def echo(case):
        nonlocal in_flight, peak
        in_flight += 1
        peak = max(peak, in_flight)
        await asyncio.sleep(0.01)
        in_flight -= 1
        return {"n": case["n"]}

    result = evaluate(echo, ROWS, [ECHO], concurrency=8, store=store, isolation="thread")

    assert peak == 8
    assert result.metric("echo").estimate == 1.0
    assert all(case.latency_ms >= 10 for case in result.cases)


def test_sync_systems_use_a_bounded_thread_pool(store):
    lock = threading.Lock()
    in_flight = 0
    peak = 0

    @system(name="sync-echo", version="1")
    def echo(case):
        nonlocal in_flight, peak
        with lock:
            in_flight += 1
            peak = max(peak, in_flight)
        time.sleep(0.01)
        with lock:
            in_flight -= 1
        return {"n": case["n"]}

    result = evaluate(echo, ROWS, [ECHO], concurrency=4, store=store, isolation="thread")

    assert peak == 4
    assert result.metric("echo").n_observed == 40


def test_async_timeout_makes_the_case_missing(store):
    @system(name="slow", version="1")
    async def slow(case):
        await asyncio.sleep(1.0 if case["n"] == 3 else 0)
        return {"n": case["n"]}

    result = evaluate(slow, ROWS[:6], [ECHO], timeout=0.05, store=store)

    late = next(case for case in result.cases if case.id == "c3")
    assert late.error.type == "TimeoutError"
    assert "0.05 s per-case timeout" in late.error.message
    assert result.metric("echo").n_missing == 1
    assert result.metric("echo").n_observed == 5


def test_sync_timeout_discards_a_late_output(store):
    @system(name="slow-sync", version="1")
    def slow(case):
        time.sleep(0.08 if case["n"] == 1 else 0)
        return {"n": case["n"]}

    result = evaluate(slow, ROWS[:3], [ECHO], timeout=0.04, store=store)
    late = next(case for case in result.cases if case.id == "c1")
    assert late.error.type == "TimeoutError"
    assert late.output is None


def test_unserialisable_output_is_missing_with_a_reason(store):
    @system(name="sets", version="1")
    def returns_a_set(case):
        return {"n": {case["n"]}}

    result = evaluate(returns_a_set, ROWS[:2], [ECHO], store=store)
    assert result.cases[0].error.type == "OutputNotSerializable"
    assert "cannot be recorded" in result.cases[0].error.message
    assert "set is not JSON serializable" in result.cases[0].error.message
    assert result.metric("echo").n_missing == 2


def test_some_failures_bound_the_interval_instead_of_counting_as_wrong(store):
    @system(name="flaky", version="1")
    def flaky(case):
        if case["n"] % 10 == 0:
            raise ValueError(f"bad case {case['n']}")
        return {"n": case["n"]}

    result = evaluate(flaky, ROWS, [ECHO], store=store)
    metric = result.metric("echo")
    assert (metric.estimate, metric.n_observed, metric.n_missing) == (1.0, 36, 4)
    complete = evaluate(lambda case: {"n": case["n"]}, ROWS[:36], [ECHO], store=store)
    assert metric.interval.lower < complete.metric("echo").interval.lower
    assert result.error_summary() == [("ValueError", 4, "c0")]
    assert "4 of 40 cases are missing" in str(result)


def test_current_case_attaches_artifacts_that_evaluators_can_read(store):
    @system(name="tracer", version="1")
    def traced(case):
        current_case().attach("trace", {"steps": [case["n"], "done"]})
        return {"n": case["n"]}

    @evaluator(criterion="traced", reads=("artifacts",))
    def has_trace(case):
        assert current_case().id == case.id
        return case.artifacts["trace"]["steps"][-1] == "done"

    result = evaluate(traced, ROWS[:5], [has_trace], store=store)
    assert result.metric("traced").estimate == 1.0
    assert result.cases[0].artifacts == {"trace": {"steps": [0, "done"]}}


def test_artifacts_must_be_json_data(store):
    @system(name="bad-artifact", version="1")
    def bad(case):
        current_case().attach("handle", object())
        return {}

    result = evaluate(bad, ROWS[:1], [ECHO], store=store)
    assert "artifact 'handle' is not JSON data" in result.cases[0].error.message


def test_a_system_must_take_one_argument():
    with pytest.raises(DeclarationError, match="takes one argument, the case's input"):

        @system(name="x", version="1")
        def two(question, context):
            return {}


def test_evaluate_works_inside_a_running_event_loop(store):
    @system(name="async-echo", version="2")
    async def echo(case):
        return {"n": case["n"]}

    async def notebook_cell():
        return evaluate(echo, ROWS[:3], [ECHO], store=store)

    # A thread of its own, as a notebook kernel's, so no loop of the test process interferes.
    results = []
    kernel = threading.Thread(target=lambda: results.append(asyncio.run(notebook_cell())))
    kernel.start()
    kernel.join()
    assert results[0].metric("echo").estimate == 1.0


def test_clustered_rows_widen_the_interval_and_say_so(store):
    # Ten documents with four questions each: answers within a document agree, so the
    # forty cases carry far less information than forty independent ones.
    rows = [
        {"id": f"d{doc}-q{q}", "input": {"n": doc}, "expected": {"n": doc}, "cluster": f"doc-{doc}"}
        for doc in range(10)
        for q in range(4)
    ]
    unclustered = [{key: value for key, value in row.items() if key != "cluster"} for row in rows]

    def half_right(case):
        return {"n": case["n"] if case["n"] % 2 else -1}

    clustered = evaluate(half_right, rows, [ECHO], store=store).metric("echo")
    independent = evaluate(half_right, unclustered, [ECHO], store=store).metric("echo")

    assert clustered.estimate == independent.estimate == 0.5
    assert "cluster means" in clustered.method
    assert "cluster" not in independent.method
    assert clustered.interval.width > independent.interval.width
    assert clustered.interval.lower <= independent.interval.lower


@pytest.mark.parametrize("timeout", [0, -1, float("nan"), float("inf")])
def test_a_timeout_that_is_not_a_positive_number_is_refused(timeout: float) -> None:
    from oloproof_core import ConfigError, plan_run
    from oloproof_core.judging.evaluators import ExactMatch

    with pytest.raises(ConfigError, match="timeout must be a positive number"):
        plan_run(
            system=lambda case: case,
            evaluators=[ExactMatch(criterion="e", field="x")],
            timeout=timeout,
        )
