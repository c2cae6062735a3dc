"""One pool, several releases of its system in turn: each case runs with its release's texts."""

from __future__ import annotations

import pytest

from oloproof_core.cases.case import CaseResult
from oloproof_core.execution.isolation import IsolationError, MeteredPool, ProcessPool
from oloproof_core.execution.isolation._bindings import KEPT
from oloproof_core.execution.isolation._lease import SHARED, PoolLease
from tests.core.execution.isolation import bound_systems as systems


def cases(n: int, **extra: object) -> list[CaseResult]:
    return [CaseResult(id=f"c{i}", input={"n": i, **extra}, expected=None) for i in range(n)]


def release(text: str, fn=systems.texts):
    return fn.with_components({"instruction": text}, version=text)


def test_the_same_processes_run_each_release_with_its_own_texts():
    # More releases than a process keeps, and back to the first: it is bound again.
    order = ["A", "B", None, "A", *(f"R{i}" for i in range(KEPT)), "A"]
    processes = set()
    with ProcessPool(systems.texts, processes=2) as pool:
        for text in order:
            records = cases(4)
            pool.run(records, release=None if text is None else release(text))
            assert [record.output["instruction"] for record in records] == [text or "declared"] * 4
            processes |= {record.output["process"] for record in records}
        assert pool.restarts == 0
    assert len(processes) == 2


def test_runs_that_end_before_every_process_answered_leave_nothing_behind():
    # One case per run: the idle processes are told each release too, and may answer
    # after their run ended, when the next run has told them another.
    with ProcessPool(systems.texts, processes=3, start="reference") as pool:
        pool.start()
        for text in [f"R{i}" for i in range(12)]:
            records = cases(1)
            pool.run(records, release=release(text))
            assert records[0].output["instruction"] == text
        assert pool.restarts == 0


def test_a_process_that_replaces_a_dead_one_is_bound_again():
    crash = CaseResult(id="crash", input={"crash": True}, expected=None)
    records = [*cases(2), crash, *cases(4)[2:]]
    with ProcessPool(systems.texts, processes=1) as pool:
        pool.run(records, release=release("A"))
        assert pool.restarts == 1
    assert records[2].error is not None
    assert records[2].error.type == "SystemProcessDied"
    kept = [records[i].output for i in (0, 1, 3, 4)]
    assert [output["instruction"] for output in kept] == ["A"] * 4
    assert kept[0]["process"] != kept[3]["process"]


def test_an_async_process_binds_each_release_before_its_cases():
    with ProcessPool(systems.async_texts, processes=1, per_process=4) as pool:
        for text in ("A", "B", "A"):
            records = cases(8)
            pool.run(records, release=release(text, systems.async_texts))
            assert {record.output["instruction"] for record in records} == {text}


def test_a_release_of_another_function_needs_a_pool_of_its_own():
    with (
        ProcessPool(systems.texts, processes=1) as pool,
        pytest.raises(IsolationError, match="a pool runs one system's function"),
    ):
        pool.run(cases(1), release=release("A", systems.other))


def test_a_lease_tells_only_of_its_own_cases():
    with MeteredPool(systems.texts, processes=1) as pool:
        crashing = PoolLease(pool, release("A"))
        calm = PoolLease(pool, release("B"))
        crashing.run([*cases(1), CaseResult(id="crash", input={"crash": True}, expected=None)])
        records = cases(3)
        calm.run(records)
        assert [record.output["instruction"] for record in records] == ["B"] * 3
        assert crashing.describe()["restarts"] == 1
        assert calm.describe()["restarts"] == 0
        assert calm.describe()["pool"] == SHARED
        assert pool.describe()["restarts"] == 1
