"""Without a concurrency asked for, a sync system's processes are started as its work
needs them: one for a quick system, more (up to the default bound) for a slow one."""

from __future__ import annotations

from oloproof import evaluate
from oloproof.evaluators import evaluator
from oloproof_core.isolation import pool_shape
from tests.core.isolation import systems

SAME_N = evaluator(criterion="same_n", reads=("output", "expected"))(
    lambda case: case.output["n"] == case.expected["n"]
)


def rows(n: int) -> list[dict]:
    return [{"id": f"c{i}", "input": {"n": i}, "expected": {"n": i}} for i in range(n)]


def run(target, n, **options):
    return evaluate(target, rows(n), [SAME_N], record=False, **options)


def pids(result) -> set[int]:
    return {case.output["pid"] for case in result.cases}


def test_a_quick_system_runs_in_one_process():
    result = run(systems.quick_pid, 300)

    assert result.metric("same_n").n_observed == 300
    assert result.provenance["execution"]["processes"] == 1
    assert len(pids(result)) == 1


def test_a_slow_system_gets_more_processes_up_to_the_default_bound():
    bound, _ = pool_shape(is_async=False, concurrency=None)
    result = run(systems.slow_pid, 12)

    assert result.metric("same_n").n_observed == 12
    started = result.provenance["execution"]["processes"]
    assert 1 < started <= bound
    assert len(pids(result)) == started


def test_an_asked_for_concurrency_starts_that_many_at_once():
    result = run(systems.quick_pid, 300, concurrency=3)

    assert result.provenance["execution"]["processes"] == 3
