"""Repeats in an optimization: every case of every split runs k times, the budget counts
each of those calls, and the proof on test takes each case's repeats as one cluster."""

from __future__ import annotations

from pathlib import Path

import pytest

import oloproof_core as engine
from oloproof_core import InMemoryStore
from oloproof_core.errors import ConfigError
from oloproof_core.optimize import InMemoryLedger, load_optimize_config, run_optimization
from tests.support.fake_openai import FakeOpenAI
from tests.support.optimize_task import INSTRUCTION, TASK_MODEL, write_project


class _KeptRuns(InMemoryStore):
    """The engine's in-memory store, keeping each run it records for the test to read."""

    def __init__(self) -> None:
        super().__init__()
        self.results: list[engine.Result] = []

    def record_run(self, result: engine.Result) -> str | None:
        self.results.append(result)
        return super().record_run(result)


def test_each_case_runs_k_times_in_the_search_and_on_test(
    tmp_path: Path, task_models: FakeOpenAI
) -> None:
    config = write_project(tmp_path, n=12, budget={"metric_calls": 200}, extra={"repeats": 2})
    store = _KeptRuns()
    result = run_optimization(
        spec=load_optimize_config(str(config)), store=store, ledger=InMemoryLedger()
    )

    assert INSTRUCTION in result.winner.texts["system_prompt"]
    assert result.splits["repeats"] == 2
    cases: dict[str, set[str]] = {}
    for split, ids in result.splits["ids"].items():
        assert [engine.repeat_of(case_id) for case_id in ids] == [1, 2] * (len(ids) // 2)
        cases[split] = {engine.case_id_of(case_id) for case_id in ids}
    # A case and its repeats stay in one split.
    assert not cases["train"] & cases["val"]
    assert not cases["val"] & cases["test"]
    assert not cases["train"] & cases["test"]

    # The system was called once per repeat evaluated, and the budget counted each call.
    test_ids = result.splits["ids"]["test"]
    task_calls = [request for request in task_models.requests if request.model == TASK_MODEL]
    assert len(task_calls) == result.evaluations["run"] + 2 * len(test_ids)
    assert result.budget_used["metric_calls"] >= result.evaluations["run"]
    assert result.seed.val["n"] == len(result.splits["ids"]["val"])

    test_runs = [r for r in store.results if r.provenance["optimization"]["split"] == "test"]
    assert len(test_runs) == 2  # the seed's and the winner's
    for run in test_runs:
        assert [case.id for case in run.cases] == test_ids
        assert run.metric("exact").n_clusters == len(cases["test"])
        assert run.provenance["repeats"]["repeats"] == 2
        assert run.provenance["repeats"]["cases"] == len(cases["test"])
    winner = test_runs[1].metric("exact")
    assert (winner.estimate, test_runs[0].metric("exact").estimate) == (1.0, 0.0)
    assert "cluster" in winner.method
    assert result.proof["winner"]["test"]["n"] == len(test_ids)
    val_runs = [r for r in store.results if r.provenance["optimization"]["split"] == "val"]
    assert all(run.provenance["repeats"]["repeats"] == 2 for run in val_runs)


def test_a_budget_below_the_seeds_repeated_val_says_so(tmp_path: Path) -> None:
    config = write_project(tmp_path, n=12, budget={"metric_calls": 4}, extra={"repeats": 2})
    with pytest.raises(ConfigError, match=r"cases × 2 repeats\); allow at least"):
        run_optimization(
            spec=load_optimize_config(str(config)),
            store=InMemoryStore(),
            ledger=InMemoryLedger(),
        )


def test_bad_repeats_in_an_optimization_config_are_refused(tmp_path: Path) -> None:
    config = write_project(tmp_path, extra={"repeats": 0})
    with pytest.raises(ConfigError, match="'repeats' must be a"):
        load_optimize_config(str(config))
