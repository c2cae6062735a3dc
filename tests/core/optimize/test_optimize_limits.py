"""Budgets stop the search at the first limit, keeping the best; test stays unseen until the end."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from oloproof_core import ConfigError, InMemoryStore, Row
from oloproof_core.optimize import (
    Budget,
    InMemoryLedger,
    SealedSplitError,
    load_optimize_config,
    run_optimization,
    split_rows,
)
from tests.support.fake_openai import FakeOpenAI
from tests.support.optimize_task import REFLECT_MODEL, write_project

# Whole searches up to each limit: the quick pass runs the engines once (test_optimize_engines).
pytestmark = pytest.mark.slow


def optimize_with(tmp_path: Path, budget: dict[str, float], **extra: object) -> object:
    spec = load_optimize_config(str(write_project(tmp_path, budget=budget, extra=dict(extra))))
    return run_optimization(spec=spec, store=InMemoryStore(), ledger=InMemoryLedger())


def test_a_metric_call_limit_is_never_overrun(tmp_path: Path, task_models: FakeOpenAI) -> None:
    result = optimize_with(tmp_path, {"metric_calls": 20})
    assert result.budget_used["stopped_by"] == "metric_calls"  # type: ignore[attr-defined]
    assert result.budget_used["metric_calls"] <= 20  # type: ignore[attr-defined]


def test_a_dollar_limit_stops_at_the_measured_spend(
    tmp_path: Path, task_models: FakeOpenAI
) -> None:
    # Each task call costs 20 µ$ (10 in, 5 out at $1/$2 per million): 0.0003 $ is
    # spent on the seed's val evaluation and the first reflection, before any better
    # candidate is found.
    result = optimize_with(tmp_path, {"usd": 0.0003})
    used = result.budget_used  # type: ignore[attr-defined]
    assert used["stopped_by"] == "usd"
    assert used["usd"] >= 0.0003
    assert set(used["usd_by_role"]) <= {"system", "reflection"}
    assert result.winner.index == result.seed.index  # type: ignore[attr-defined]


def test_a_wall_time_limit_stops_the_search_and_keeps_the_best(
    tmp_path: Path, task_models: FakeOpenAI
) -> None:
    result = optimize_with(tmp_path, {"wall_time_s": 0.01})
    assert result.budget_used["stopped_by"] == "wall_time_s"  # type: ignore[attr-defined]
    assert result.proof["seed"]["test"]["n"] > 0  # type: ignore[attr-defined]


def test_no_test_case_reaches_the_system_before_the_search_ends(
    tmp_path: Path, task_models: FakeOpenAI
) -> None:
    progress: list[tuple[str, int]] = []

    def note(event: str, details: object) -> None:
        progress.append((event, task_models.request_count))

    spec = load_optimize_config(str(write_project(tmp_path)))
    ledger = InMemoryLedger()
    result = run_optimization(spec=spec, store=InMemoryStore(), ledger=ledger, progress=note)
    test_ids = set(result.splits["ids"]["test"])
    questions = {row["input"]["question"]: row["id"] for row in _rows(tmp_path)}
    proving_at = dict(progress)["proving"]
    asked = [
        questions.get(request.user_text) if request.model != REFLECT_MODEL else None
        for request in task_models.requests
    ]
    before, after = asked[:proving_at], asked[proving_at:]
    assert not test_ids & set(before)
    assert test_ids <= set(after)
    assert len([case for case in after if case in test_ids]) == 2 * len(test_ids)  # seed, winner
    assert all(record.split != "test" for record in ledger.evaluations(result.optimization_id))


def _rows(folder: Path) -> list[dict[str, object]]:
    lines = (folder / "cases.jsonl").read_text().splitlines()
    return [json.loads(line) for line in lines]


def test_the_search_is_refused_a_test_case(tmp_path: Path, task_models: FakeOpenAI) -> None:
    from oloproof_core.optimize._candidates import Evaluations

    spec = load_optimize_config(str(write_project(tmp_path)))
    rows = [Row(id="t1", input={"question": "What is 1 + 1?"})]
    ledger = InMemoryLedger()
    evaluations = Evaluations(
        make_release=lambda texts, version: spec.system,
        base_version="1",
        evaluators=spec.evaluators,
        objective="exact",
        store=InMemoryStore(),
        ledger=ledger,
        optimization_id=ledger.optimization_begin(config={}),
        meter=None,  # type: ignore[arg-type]
        open_rows={"train": [], "val": []},
        concurrency=1,
        timeout=None,
    )
    with pytest.raises(SealedSplitError, match="test split stays unseen"):
        evaluations.evaluate({"system_prompt": "x"}, rows)


def test_a_budget_needs_a_limit_and_room_for_the_seed(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="at least one limit"):
        Budget.from_mapping({})
    with pytest.raises(ConfigError, match="unknown limit 'calls'"):
        Budget.from_mapping({"calls": 3})
    with pytest.raises(ConfigError, match="cannot even evaluate the seed"):
        optimize_with(tmp_path, {"metric_calls": 2})


def test_a_dataset_without_splits_is_split_by_id_with_whole_clusters() -> None:
    rows = [Row(id=f"c{i}", input={"i": i}, cluster=f"user{i % 40}") for i in range(200)]
    first, again = split_rows(rows), split_rows(list(reversed(rows)))
    assert first.record()["counts"] == again.record()["counts"]
    assert {row.id for row in first.test} == {row.id for row in again.test}
    clusters = [{row.cluster for row in part} for part in (first.train, first.val, first.test)]
    assert not (clusters[0] & clusters[1])
    assert not (clusters[0] & clusters[2])
    assert not (clusters[1] & clusters[2])
    assert first.source == "hashed"
    assert all(clusters)
    tiny = split_rows([Row(id=f"t{i}", input={}) for i in range(3)])
    assert [len(tiny.train), len(tiny.val), len(tiny.test)] == [1, 1, 1]


def test_a_dataset_with_splits_keeps_them_and_needs_all_three() -> None:
    rows = [Row(id=f"r{i}", input={}, split=("train", "val", "test")[i % 3]) for i in range(9)]
    assert split_rows(rows).source == "dataset"
    with pytest.raises(ConfigError, match="no test rows"):
        split_rows([row for row in rows if row.split != "test"])
