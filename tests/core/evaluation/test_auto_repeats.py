"""`repeats: auto` in the engine: the allocation from earlier runs, and figures that weigh
each case once however many times it ran."""

from __future__ import annotations

import pytest

import oloproof_core as engine
from oloproof_core.evaluation.auto_repeats import AUTO_MOST, allocate
from oloproof_core.judging.evaluators import ExactMatch
from oloproof_core.results.store import InMemoryStore

ROWS = [{"id": f"q{i}", "input": {"q": i}, "expected": {"label": "a"}} for i in range(8)]


def test_a_case_runs_once_only_after_two_or_more_earlier_tries_that_agreed() -> None:
    earlier = {"same": ["[1]", "[1]"], "flaky": ["[1]", "[0]"], "once": ["[1]"]}
    tries = allocate(["same", "flaky", "once", "new"], earlier)
    assert tries == {"same": 1, "flaky": AUTO_MOST, "once": AUTO_MOST, "new": AUTO_MOST}


def answer(question: dict[str, int]) -> dict[str, str]:
    from oloproof_core import current_case

    repeat = int(current_case().id.rpartition("#r")[2])
    if question["q"] < 2:  # right on odd repeats only: flaky
        return {"label": "a" if repeat % 2 else "b"}
    return {"label": "a" if question["q"] < 5 else "b"}


def run(store: InMemoryStore) -> dict:  # type: ignore[type-arg]
    result = engine.run_evaluation(
        system=answer, dataset=ROWS, evaluators=[ExactMatch(criterion="right", field="label")],
        store=store, isolation="thread", repeats="auto",
    )  # fmt: skip
    return result.to_dict()


def test_the_second_run_reads_the_first_and_weighs_each_case_once() -> None:
    store = InMemoryStore()
    first = run(store)
    assert first["provenance"]["repeats"]["auto"]["calls"] == 8 * AUTO_MOST
    # q0, q1: 3 of 5; q2–q4 right; q5–q7 wrong.
    assert first["metrics"][0]["estimate"] == pytest.approx((0.6 + 0.6 + 3) / 8)
    second = run(store)
    auto = second["provenance"]["repeats"]["auto"]
    assert (auto["evidence_runs"], auto["cases_once"], auto["calls"]) == (1, 6, 6 + 2 * AUTO_MOST)
    assert second["metrics"][0]["estimate"] == pytest.approx((0.6 + 0.6 + 3) / 8)
    assert second["metrics"][0]["n_observed"] == 8
    row_mean = (3 + 3 + 3) / 16  # what weighing each try once would say
    assert second["metrics"][0]["estimate"] != pytest.approx(row_mean)


def test_a_runs_columns_give_each_case_its_tries_without_the_ones_that_have_no_value() -> None:
    from oloproof_core.evaluation.auto_repeats import column_outcomes

    ids = ["a#r1", "a#r2", "b#r1", "b#r2", "c#r1", "c#r2", "d#r1"]
    right = [1.0, 1.0, 1.0, 0.0, 1.0, None, 0.0]
    score = [0.5, 0.5, 0.5, 0.5, 0.2, 0.2, float("nan")]
    found = column_outcomes(ids, [right, score], repeated=True)
    assert set(found) == {"a", "b", "c"}  # d's one try has no score
    assert (len(found["a"]), len(set(found["a"]))) == (2, 1)
    assert (len(found["b"]), len(set(found["b"]))) == (2, 2)
    assert len(found["c"]) == 1  # its second try has no verdict
    assert allocate(["a", "b", "c", "d"], found) == {"a": 1, "b": 5, "c": 5, "d": 5}


def test_a_datasets_own_clusters_stay_the_unit_when_cases_run_different_times() -> None:
    rows = [
        {"id": f"q{i}", "input": {"q": i}, "expected": {"label": "a"}, "cluster": f"doc{i // 2}"}
        for i in range(8)
    ]
    store = InMemoryStore()
    for _ in range(2):
        result = engine.run_evaluation(
            system=answer, dataset=rows, evaluators=[ExactMatch(criterion="right", field="label")],
            store=store, isolation="thread", repeats="auto",
        )  # fmt: skip
    right = result.metrics[0]
    assert result.provenance["repeats"]["auto"]["cases_once"] == 6
    assert (right.n_clusters, right.n_observed) == (4, 8)
    assert right.estimate == pytest.approx((0.6 + 0.6 + 3) / 8)
