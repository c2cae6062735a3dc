"""Judging does each piece of work once: a key shared by many cases is judged and cached
once, a re-run judges nothing, and evaluators that wait judge many cases at a time."""

from __future__ import annotations

import asyncio
import threading
import time
from typing import Any

import pytest

from oloproof import evaluate, system
from oloproof.evaluators import evaluator
from oloproof_core import ConfigError, InMemoryStore

LABELS = ("refund", "other")
ROWS = [
    {"id": f"c{i}", "input": {"q": f"question {i}"}, "expected": {"label": LABELS[i % 2]}}
    for i in range(1000)
]


@system(name="label-bot", version="1")
def label_bot(case):
    return {"label": "refund" if int(case["q"].split()[1]) % 2 == 0 else "other"}


class WritesCounted(InMemoryStore):
    """The in-memory store, keeping every cache entry it was asked to write."""

    def __init__(self) -> None:
        super().__init__()
        self.written: list[str] = []

    def put_verdicts(self, entries):
        self.written.extend(entry.key for entry in entries)
        super().put_verdicts(entries)


def test_cases_sharing_a_key_are_judged_once_and_cached_once() -> None:
    calls: list[str] = []

    @evaluator(criterion="label_match", reads=("output", "expected"))
    def label_match(case):
        calls.append(case.id)
        return case.output["label"] == case.expected["label"]

    store = WritesCounted()
    result = evaluate(label_bot, ROWS, [label_match], store=store, isolation="thread")

    assert len(calls) == 2  # two distinct (output, expected) pairs among 1,000 cases
    assert len(store.written) == len(set(store.written)) == 2
    assert result.provenance["judging"]["label_match"] == {
        "judged": 2,
        "cached": 998,
        "failed": 0,
        "skipped": 0,
    }
    assert all(case.verdicts["label_match"].value == 1.0 for case in result.cases)
    assert result.metric("label_match").n_observed == 1000


class LookupsCounted(InMemoryStore):
    """The in-memory store, keeping the keys of every verdict lookup it was asked for."""

    def __init__(self) -> None:
        super().__init__()
        self.asked: list[list[str]] = []

    def get_verdicts(self, keys):
        self.asked.append(list(keys))
        return super().get_verdicts(keys)


def test_a_run_in_batches_asks_its_store_only_for_keys_it_has_not_settled() -> None:
    """The store may be writing the batch before when the next one is judged: a key an
    earlier batch settled is not asked for again, so that batch does not wait for it."""
    from oloproof_core import run_evaluation
    from oloproof_core.evaluation import recording_as_it_goes

    calls: list[str] = []

    @evaluator(criterion="label_match", reads=("output", "expected"))
    def label_match(case):
        calls.append(case.id)
        return case.output["label"] == case.expected["label"]

    rows = [
        {"id": f"c{i}", "input": {"q": f"question {i}"}, "expected": {"label": LABELS[i % 2]}}
        for i in range(4000)
    ]
    assert len(recording_as_it_goes.batch_bounds(len(rows))) >= 3
    store = LookupsCounted()

    def run_in_batches() -> Any:
        return run_evaluation(
            system=label_bot,
            dataset=rows,
            evaluators=[label_match],
            store=store,
            isolation="thread",
            keep_cases=False,
        )

    result = run_in_batches()

    assert len(calls) == 2
    assert [len(keys) for keys in store.asked] == [2]  # the first batch's, then none
    assert result.provenance["judging"]["label_match"] == {
        "judged": 2,
        "cached": 3998,
        "failed": 0,
        "skipped": 0,
    }
    again = run_in_batches()
    assert len(calls) == 2  # a re-run: both keys from the store, in its first batch
    assert [len(keys) for keys in store.asked] == [2, 2]
    assert again.provenance["judging"]["label_match"]["cached"] == 4000


def test_a_cached_rerun_makes_no_evaluator_call_and_writes_nothing() -> None:
    calls: list[str] = []

    @evaluator(criterion="per_case", reads=("input", "output"))
    def per_case(case):
        calls.append(case.id)
        return True

    store = WritesCounted()
    evaluate(label_bot, ROWS, [per_case], store=store, isolation="thread")
    assert len(calls) == 1000
    written = len(store.written)

    again = evaluate(label_bot, ROWS, [per_case], store=store, isolation="thread")

    assert len(calls) == 1000
    assert len(store.written) == written
    assert again.provenance["judging"]["per_case"]["cached"] == 1000


def _overlap_meter():
    """A counter of cases in flight and the most ever seen at once."""
    state = {"now": 0, "most": 0}
    lock = threading.Lock()

    def enter() -> None:
        with lock:
            state["now"] += 1
            state["most"] = max(state["most"], state["now"])

    def leave() -> None:
        with lock:
            state["now"] -= 1

    return state, enter, leave


def test_an_async_evaluator_judges_cases_concurrently_within_the_limit(monkeypatch) -> None:
    monkeypatch.setenv("OLOPROOF_JUDGE_CONCURRENCY", "8")
    state, enter, leave = _overlap_meter()

    @evaluator(criterion="slow_judge", reads=("input", "output"))
    async def slow_judge(case):
        enter()
        try:
            await asyncio.sleep(0.01)
        finally:
            leave()
        return case.output["label"] in LABELS

    result = evaluate(
        label_bot, ROWS[:100], [slow_judge], store=InMemoryStore(), isolation="thread"
    )

    assert result.metric("slow_judge").estimate == 1.0
    assert 1 < state["most"] <= 8


def test_a_waiting_sync_evaluator_judges_cases_in_threads(monkeypatch) -> None:
    monkeypatch.setenv("OLOPROOF_JUDGE_CONCURRENCY", "4")
    state, enter, leave = _overlap_meter()

    @evaluator(criterion="blocking_judge", reads=("input", "output"), io_bound=True)
    def blocking_judge(case):
        enter()
        try:
            time.sleep(0.01)
        finally:
            leave()
        return True

    evaluate(label_bot, ROWS[:60], [blocking_judge], store=InMemoryStore(), isolation="thread")

    assert 1 < state["most"] <= 4


def test_an_async_evaluator_that_raises_makes_that_verdict_missing() -> None:
    @evaluator(criterion="fragile_async", reads=("input", "output"))
    async def fragile_async(case):
        if case.id == "c3":
            raise KeyError("label")
        return True

    result = evaluate(
        label_bot, ROWS[:10], [fragile_async], store=InMemoryStore(), isolation="thread"
    )

    assert result.cases[3].verdicts["fragile_async"].error == "KeyError: 'label'"
    assert result.metric("fragile_async").n_missing == 1


@pytest.mark.parametrize("setting", ["0", "-2", "many"])
def test_a_judge_concurrency_that_is_not_a_positive_number_is_refused(monkeypatch, setting) -> None:
    monkeypatch.setenv("OLOPROOF_JUDGE_CONCURRENCY", setting)

    @evaluator(criterion="waits", reads=("output",), io_bound=True)
    def waits(case):
        return True

    with pytest.raises(ConfigError, match="OLOPROOF_JUDGE_CONCURRENCY"):
        evaluate(label_bot, ROWS[:4], [waits], store=InMemoryStore(), isolation="thread")
