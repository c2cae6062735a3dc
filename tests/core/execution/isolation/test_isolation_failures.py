"""A system process that crashes, exits, hogs memory or hangs loses only its own cases."""

from __future__ import annotations

import json
import os
import time

import pytest

from oloproof import evaluate
from oloproof.cli import main
from oloproof.evaluators import evaluator
from oloproof_core.cases.case import CaseResult
from oloproof_core.execution.isolation import ProcessPool
from oloproof_core.results.reading import load_result
from tests.core.execution.isolation import systems

ROWS = [{"id": f"c{i}", "input": {"n": i}, "expected": {"n": i}} for i in range(8)]
SAME_N = evaluator(criterion="same_n", reads=("output", "expected"))(
    lambda case: case.output["n"] == case.expected["n"]
)


def run(target, **options):
    result = evaluate(target, ROWS, [SAME_N], record=False, **options)
    assert not _children_of_this_process(), "the pool left processes behind"
    return result


def run_together(target, **options):
    """Every case on one event loop, as the engine's pool can hold them (a run gives each
    case a process of its own: docs/isolation.md): the records and the pool's account."""
    records = [CaseResult(id=row["id"], input=row["input"], expected=None) for row in ROWS]
    with ProcessPool(target, processes=1, per_process=len(ROWS), **options) as pool:
        pool.run(records)
        execution = pool.describe()
    assert not _children_of_this_process(), "the pool left processes behind"
    return records, execution


def only_case(result, case_id):
    cases = result if isinstance(result, list) else result.cases
    return next(case for case in cases if case.id == case_id)


def assert_only_losses(result, lost_ids):
    if not isinstance(result, list):
        metric = result.metric("same_n")
        assert metric.n_missing == len(lost_ids)
        assert metric.n_observed == len(ROWS) - len(lost_ids)
        assert metric.estimate == 1.0
    for case in result if isinstance(result, list) else result.cases:
        assert (case.error is not None) == (case.id in lost_ids), case.error
        if case.error is None:
            assert case.output["n"] == case.input["n"]


@pytest.mark.parametrize("target", [systems.segfault_on_three, systems.sigsegv_on_three])
def test_a_segfault_loses_only_its_case(target):
    result = run(target, concurrency=2)

    assert_only_losses(result, {"c3"})
    error = only_case(result, "c3").error
    assert error.type == "SystemProcessDied"
    assert error.message == (
        "the system's process died with signal 11 (SIGSEGV) while running this case"
    )
    assert result.provenance["execution"]["restarts"] >= 1


def test_exiting_loses_only_the_cases_that_exited():
    result = run(systems.exits_on_three, concurrency=2)

    assert_only_losses(result, {"c3", "c5"})
    assert "exited with status 3 while running this case" in only_case(result, "c3").error.message
    assert "exited with status 2 while running this case" in only_case(result, "c5").error.message


def test_a_memory_hog_past_the_cap_loses_only_its_case():
    result = run(systems.hog_on_three, memory_limit_mb=1024)

    assert_only_losses(result, {"c3"})
    error = only_case(result, "c3").error
    assert error.type == "MemoryError"
    assert "1024 MiB" in error.message
    assert "memory_limit_mb" in error.message
    assert result.provenance["execution"]["memory_limit_mb"] == 1024


def test_a_sync_system_that_never_returns_is_stopped_at_the_timeout():
    started = time.perf_counter()
    result = run(systems.sleeps_forever_on_three, timeout=0.5, concurrency=2)

    assert time.perf_counter() - started < 10
    assert_only_losses(result, {"c3"})
    late = only_case(result, "c3")
    assert late.error.type == "TimeoutError"
    assert "0.5 s per-case timeout" in late.error.message
    assert 500 <= late.latency_ms < 3000


def test_an_async_system_that_blocks_its_event_loop_is_stopped_by_the_parent():
    started = time.perf_counter()
    # One case in flight: a blocked event loop delays every case sharing it, and those
    # run past their deadline too.
    result = run(systems.async_blocks_on_three, timeout=0.3, concurrency=1)

    assert time.perf_counter() - started < 15
    assert_only_losses(result, {"c3"})
    assert only_case(result, "c3").error.type == "TimeoutError"


def _children_of_this_process() -> list[int]:
    me = str(os.getpid())
    children = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as handle:
                fields = handle.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if fields[1] == me and fields[0] != "Z":
            children.append(int(entry))
    return children


def test_an_async_case_that_blocks_the_loop_loses_only_itself():
    result = run(systems.async_blocks_forever_on_three, timeout=0.5, concurrency=4)

    assert_only_losses(result, {"c3"})
    assert only_case(result, "c3").error.type == "TimeoutError"
    # Each case had its process to itself: no other case was in flight with it.
    assert result.provenance["execution"]["cases_per_process"] == 1
    assert result.provenance["execution"]["retried"] is None


def test_cases_sharing_an_event_loop_that_one_of_them_blocks_lose_only_that_one():
    records, execution = run_together(systems.async_blocks_forever_on_three, timeout=0.5)

    assert_only_losses(records, {"c3"})
    assert only_case(records, "c3").error.type == "TimeoutError"
    retried = execution["retried"]
    assert "c3" in retried["ids"]
    assert retried["cases"] == len(retried["ids"]) >= 2


DYING = [
    (systems.async_exits_on_three, "exited with status 3"),
    (systems.async_segfaults_on_three, "signal 11 (SIGSEGV)"),
    (systems.async_killed_on_three, "signal 9 (SIGKILL"),
]


@pytest.mark.parametrize(("target", "words"), DYING)
def test_an_async_process_that_dies_loses_only_its_case(target, words):
    result = run(target, concurrency=4)

    assert_only_losses(result, {"c3"})
    error = only_case(result, "c3").error
    assert error.type == "SystemProcessDied"
    assert words in error.message
    assert "run again alone" not in error.message  # it was alone
    assert result.provenance["execution"]["retried"] is None


@pytest.mark.parametrize(("target", "words"), DYING)
def test_cases_sharing_a_process_that_one_of_them_kills_lose_only_that_one(target, words):
    records, execution = run_together(target)

    assert_only_losses(records, {"c3"})
    error = only_case(records, "c3").error
    assert error.type == "SystemProcessDied"
    assert words in error.message
    assert "run again alone" in error.message
    # The cases still in flight when the process died: c3 and those not yet answered.
    retried = execution["retried"]
    assert "c3" in retried["ids"]
    assert retried["cases"] == len(retried["ids"]) >= 2


def test_a_run_where_no_process_died_says_no_case_was_retried():
    result = run(systems.async_sleep)

    assert_only_losses(result, set())
    assert result.provenance["execution"]["retried"] is None


def test_the_command_loses_only_the_case_that_blocks_the_loop(tmp_path, monkeypatch, capsys):
    (tmp_path / "blocker.py").write_text(
        "import asyncio, time\n"
        "from oloproof import system\n\n"
        "@system(name='blocker', version='1')\n"
        "async def answer(case):\n"
        "    await asyncio.sleep(0.02)\n"
        "    if case['n'] == 3:\n"
        "        time.sleep(10**6)\n"
        "    return {'n': case['n']}\n"
    )
    (tmp_path / "cases.jsonl").write_text("".join(json.dumps(row) + "\n" for row in ROWS))
    (tmp_path / "oloproof.yaml").write_text(
        "system: blocker:answer\ndataset: cases.jsonl\ntimeout: 0.5\n"
        "evaluators:\n  - ExactMatch: {criterion: same_n, field: n}\n"
    )
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))

    code = main(["run", "oloproof.yaml", "--json", "result.json", "--no-progress"])

    assert code == 0, capsys.readouterr()
    result = load_result("result.json")
    metric = result.metric("same_n")
    assert (metric.n_observed, metric.n_missing) == (7, 1)
    assert only_case(result, "c3").error.type == "TimeoutError"
