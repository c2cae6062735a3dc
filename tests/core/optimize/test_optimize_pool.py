"""One pool of system processes serves a whole optimization; each run stays its own."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import oloproof_core.evaluation.processes as run_processes_module
import oloproof_core.execution.isolation._keeper as keeper_module
from oloproof_core import InMemoryStore
from oloproof_core.execution.isolation import MeteredPool
from oloproof_core.execution.isolation._lease import SHARED
from oloproof_core.optimize import InMemoryLedger, load_optimize_config, run_optimization
from tests.support.fake_openai import FakeOpenAI
from tests.support.optimize_task import INSTRUCTION, write_project


class RecordingStore(InMemoryStore):
    def __init__(self) -> None:
        super().__init__()
        self.results: list[Any] = []

    def record_run(self, result: Any) -> str:
        self.results.append(result)
        return super().record_run(result)


def test_every_evaluation_and_the_proof_share_one_pool(
    tmp_path: Path, task_models: FakeOpenAI, monkeypatch: pytest.MonkeyPatch
) -> None:
    pools: list[MeteredPool] = []
    started: list[str] = []
    start_child = keeper_module.start_child

    class CountedPool(MeteredPool):
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            pools.append(self)

    def counted(system: Any, *args: Any, **kwargs: Any) -> Any:
        started.append(system.release)
        return start_child(system, *args, **kwargs)

    monkeypatch.setattr(run_processes_module, "MeteredPool", CountedPool)
    monkeypatch.setattr(keeper_module, "start_child", counted)
    spec = load_optimize_config(str(write_project(tmp_path, extra={"concurrency": 2})))
    store = RecordingStore()
    result = run_optimization(spec=spec, store=store, ledger=InMemoryLedger())

    assert result.evaluations["run"] > 20
    # One pool (and gateway) for dozens of evaluations; its processes started for the
    # seed's release only, never for another candidate (the metric judges in processes
    # of its own, started apart from the system's).
    assert len(pools) == 1
    systems = {name for name in started if not name.startswith("evaluator ")}
    assert systems == {f"calc@{result.seed.version}"}
    tests = {run.provenance["optimization"]["candidate"]: run for run in store.results}
    tests = {
        index: run
        for index, run in tests.items()
        if run.provenance["optimization"]["split"] == "test"
    }
    seed, winner = tests[result.seed.index], tests[result.winner.index]
    # Each test run is its candidate's: its release, its texts' outputs, its provenance.
    assert seed.provenance["system"]["version"] == result.seed.version
    assert winner.provenance["system"]["version"] == result.winner.version
    assert INSTRUCTION in result.winner.texts["system_prompt"]
    assert all(" " in case.output["answer"] for case in seed.cases)
    assert all(case.output["answer"].isdigit() for case in winner.cases)
    for run in (seed, winner):
        execution = run.provenance["execution"]
        assert execution["pool"] == SHARED
        assert execution["restarts"] == 0
        assert "unattributed_model_calls" not in execution
        assert run.usage()["system"].calls == len(run.cases)
