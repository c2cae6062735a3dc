"""Without a concurrency asked for, a sync system's processes are started as its work
needs them: one for a quick system, more (up to the default bound) for a slow one.

The pool's decisions are checked on given times (`Pace`), the runs on real processes."""

from __future__ import annotations

from oloproof import evaluate
from oloproof.evaluators import evaluator
from oloproof_core.execution.isolation import pool_shape
from oloproof_core.execution.isolation._pace import Pace
from tests.core.execution.isolation import systems

SAME_N = evaluator(criterion="same_n", reads=("output", "expected"))(
    lambda case: case.output["n"] == case.expected["n"]
)


def rows(n: int) -> list[dict]:
    return [{"id": f"c{i}", "input": {"n": i}, "expected": {"n": i}} for i in range(n)]


def run(target, n, **options):
    return evaluate(target, rows(n), [SAME_N], record=False, **options)


def pids(result) -> set[str]:
    return {case.output["pid"] for case in result.cases}


def test_a_quick_system_runs_in_one_process():
    # Five quick cases take far less than a start-up however busy the machine is.
    result = run(systems.quick_pid, 5)

    assert result.metric("same_n").n_observed == 5
    assert result.provenance["execution"]["processes"] == 1
    assert len(pids(result)) == 1


def pace_after(start_up_s: float, settled: int, case_s: float = 0.001) -> Pace:
    """A pace measured from time 0, `settled` cases back, each `case_s` in flight; times
    are given to `to_add`."""
    pace = Pace()
    pace.ready(start_up_s)
    pace.begin(0.0)
    for _ in range(settled):
        pace.settle(case_s)
    return pace


def test_the_pool_doubles_only_while_the_waiting_cases_outlast_two_start_ups():
    # 0.25 s to start a process; 100 cases done in 0.1 s: 1 ms a case.
    quick = pace_after(0.25, 100)
    assert quick.to_add(0.1, 200, 0.0, ready=1, slots=1, limit=4) == 0  # 0.2 s of work left
    # One start-up's worth and more, but less than two: a second process would be ready
    # for the last 0.15 s, its start-up taking a CPU from the first meanwhile.
    assert quick.to_add(0.1, 400, 0.0, ready=1, slots=1, limit=4) == 0
    assert quick.to_add(0.1, 600, 0.0, ready=1, slots=1, limit=4) == 1  # 0.6 s left
    # Before a pace is known, a case in flight for 0.3 s already says "slow".
    slow = pace_after(0.25, 0)
    assert slow.to_add(0.01, 3, 0.3, ready=1, slots=1, limit=4) == 1
    assert slow.to_add(0.01, 3, 0.01, ready=1, slots=1, limit=4) == 0


def test_a_quick_case_in_flight_does_not_decide_for_the_cases_waiting():
    # One case back after 0.3 ms, the next in flight for 0.1 ms, 2,000 waiting: 0.2 s at
    # that rate, but far too few cases and too short a time to be the pool's pace.
    pace = pace_after(0.1, 1)
    assert pace.to_add(0.0003, 2000, 0.0001, ready=1, slots=1, limit=4) == 0
    # A delay of a few milliseconds (the machine was busy) says nothing either...
    assert pace.to_add(0.004, 2000, 0.003, ready=1, slots=1, limit=4) == 0
    # ...while a case in flight for a quarter of a start-up does.
    assert pace.to_add(0.03, 2000, 0.026, ready=1, slots=1, limit=4) == 1
    # As many again, never past the bound, and never beside a slot still starting.
    assert pace_after(0.25, 0).to_add(0.01, 50, 0.3, ready=3, slots=3, limit=4) == 1
    assert pace_after(0.25, 0).to_add(0.01, 50, 0.3, ready=4, slots=4, limit=4) == 0


def test_past_one_process_per_cpu_the_pool_doubles_only_if_the_last_doubling_paid(
    monkeypatch,
):
    monkeypatch.setattr("os.cpu_count", lambda: 2)
    pace = pace_after(0.25, 100)
    assert pace.to_add(0.1, 10_000, 0.0, ready=1, slots=1, limit=8) == 1  # 1 -> 2
    assert pace.to_add(0.1, 10_000, 0.0, ready=2, slots=2, limit=8) == 0  # new pace from here
    for _ in range(110):  # two processes: 110 cases in 0.1 s, hardly faster than one
        pace.settle(0.001)
    assert pace.to_add(0.2, 10_000, 0.0, ready=2, slots=2, limit=8) == 0
    # The run's next batch of cases measures its pace afresh, and still remembers that
    # the doubling did not pay.
    pace.begin(0.3)
    for _ in range(110):
        pace.settle(0.001)
    assert pace.to_add(0.4, 10_000, 0.0, ready=2, slots=2, limit=8) == 0
    faster = pace_after(0.25, 100)
    faster.to_add(0.1, 10_000, 0.0, ready=1, slots=1, limit=8)
    faster.to_add(0.1, 10_000, 0.0, ready=2, slots=2, limit=8)
    for _ in range(200):  # twice as fast with two
        faster.settle(0.001)
    assert faster.to_add(0.2, 10_000, 0.0, ready=2, slots=2, limit=8) == 2  # 2 -> 4


def test_a_system_quicker_than_the_pools_own_loop_stays_in_one_process():
    # 100 cases back in 0.1 s, but each was in flight only 20 µs: the parent's loop, not
    # the system, sets the pace, and a second process would only add wake-ups.
    quick = pace_after(0.25, 100, case_s=20e-6)
    assert quick.to_add(0.1, 10_000, 0.0, ready=1, slots=1, limit=4) == 0
    # A moment's delay of one case in flight says nothing...
    assert quick.to_add(0.1, 10_000, 0.002, ready=1, slots=1, limit=4) == 0
    # ...a case in flight for a quarter of a start-up does, as does a slower system.
    assert quick.to_add(0.1, 10_000, 0.07, ready=1, slots=1, limit=4) == 1
    slower = pace_after(0.25, 100, case_s=300e-6)
    assert slower.to_add(0.1, 10_000, 0.0, ready=1, slots=1, limit=4) == 1


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
