"""Each engine finds the instruction the task needs, from the metric's feedback alone."""

from __future__ import annotations

from pathlib import Path

import pytest

from oloproof_core import InMemoryStore
from oloproof_core.optimize import InMemoryLedger, load_optimize_config, run_optimization
from tests.support.fake_openai import FakeOpenAI
from tests.support.optimize_task import INSTRUCTION, write_project


@pytest.mark.parametrize("engine", ["gepa", "auto"])
def test_the_engine_finds_the_instruction_and_proves_it_on_test(
    engine: str, tmp_path: Path, task_models: FakeOpenAI
) -> None:
    spec = load_optimize_config(str(write_project(tmp_path, engine=engine)))
    result = run_optimization(spec=spec, store=InMemoryStore(), ledger=InMemoryLedger())

    assert INSTRUCTION in result.winner.texts["system_prompt"]
    assert result.seed.val["estimate"] == 0.0
    assert result.winner.val["estimate"] == 1.0
    assert result.winner.version.startswith("1+opt1.")
    assert result.winner.parents == (0,)
    assert result.winner.reflection is not None
    assert "number only" in result.winner.reflection["calls"][0]["prompt"]
    assert result.proof["winner"]["test"]["estimate"] == 1.0
    assert result.proof["seed"]["test"]["estimate"] == 0.0
    assert result.proof["gate"]["outcome"] == "pass"
    assert result.proof["comparison"] is not None
    assert result.budget_used["metric_calls"] <= 120
    assert result.budget_used["stopped_by"] == "metric_calls"
