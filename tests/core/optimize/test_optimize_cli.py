"""`oloproof optimize optimize.yaml`: progress per candidate, the outcome, the gate's exit code."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from oloproof.cli import main
from tests.support.fake_openai import FakeOpenAI
from tests.support.optimize_task import INSTRUCTION, write_project


def test_optimize_prints_progress_and_the_proof_and_exits_with_the_gate(
    tmp_path: Path, task_models: FakeOpenAI, capsys: pytest.CaptureFixture[str]
) -> None:
    config = write_project(tmp_path)
    code = main(["optimize", str(config), "--no-record", "--json", str(tmp_path / "out.json")])
    out, err = capsys.readouterr()
    assert code == 0
    assert "engine gepa" in err
    assert "test held out" in err
    assert "candidate 0 (1+opt1.0): val 0.000" in err
    assert "running the seed (0) and the winner" in err
    assert "← winner" in out
    assert "optimism gap" in out
    assert "gate on test: pass" in out
    outcome = json.loads((tmp_path / "out.json").read_text())
    assert INSTRUCTION in outcome["winner"]["texts"]["system_prompt"]


def test_optimize_refuses_a_config_without_a_budget(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = write_project(tmp_path)
    data = json.loads(config.read_text())
    del data["budget"]
    config.write_text(json.dumps(data))
    assert main(["optimize", str(config), "--no-record"]) == 3
    assert "budget: give at least one limit" in capsys.readouterr().err
