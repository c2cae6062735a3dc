"""Generated bad input through the installed command, as a user runs it.

Fewer inputs than the library's fuzzing (each is a process), the same property: every
command ends with an exit code from the README's table and, for bad input, exit 3 with
a message naming the file — never a traceback, never exit 0 without a result.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from tests.core.fuzz.test_fuzz_bad_input import (
    ENCODINGS,
    _mutated,
    _result_dict,
    encoded,
    evaluator_entries,
    policy_rules,
)
from tests.core.fuzz.test_fuzz_inputs import json_values
from tests.faces.conftest import write_project
from tests.journeys.conftest import run_user

CLI = settings(
    max_examples=15,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    project = tmp_path_factory.mktemp("cli-fuzz") / "my-evals"
    write_project(project, n=4)
    (project / "run.json").write_text(json.dumps(_result_dict()), encoding="utf-8")
    return project


def _ended_clearly(done: Any, *, result_said: str) -> None:
    assert "Traceback" not in done.stderr, done.stderr
    assert done.returncode in (0, 1, 2, 3, 5), done.stderr
    if done.returncode == 3:
        assert done.stderr.startswith(("oloproof: error: ", "usage: ")), done.stderr
    elif done.returncode in (0, 1, 2):
        assert result_said in done.stdout, done.stdout + done.stderr


@CLI
@given(
    path=st.lists(st.integers(min_value=0, max_value=20), max_size=4),
    value=json_values,
    rules=policy_rules,
    encoding=st.sampled_from(ENCODINGS),
    which=st.sampled_from(["result", "policy", "baseline"]),
)
def test_gate_on_generated_files_ends_clearly(
    folder: Path, path: list[int], value: Any, rules: Any, encoding: str, which: str
) -> None:
    result = encoded(json.dumps(_mutated(_result_dict(), path, value)), encoding)
    (folder / "fuzzed.json").write_bytes(result)
    try:
        policy = yaml.safe_dump({"version": 1, "rules": rules}, allow_unicode=True)
    except yaml.YAMLError:
        policy = "version: 1\nrules: []\n"
    (folder / "fuzzed.yaml").write_bytes(encoded(policy, encoding))
    (folder / "release.yaml").write_text(
        "version: 1\nrules:\n  - metric: exact_label\n    min: 0.5\n", encoding="utf-8"
    )
    args = {
        "result": ["gate", "fuzzed.json", "release.yaml"],
        "policy": ["gate", "run.json", "fuzzed.yaml"],
        "baseline": ["gate", "run.json", "release.yaml", "--baseline", "fuzzed.json"],
    }[which]
    done = run_user(["oloproof", *args], cwd=folder, timeout=120)
    _ended_clearly(done, result_said="gate")
    if done.returncode == 3 and which != "policy":
        assert "fuzzed" in done.stderr or "release.yaml" in done.stderr, done.stderr


config_keys = st.sampled_from(
    ["split", "concurrency", "timeout", "confidence", "isolation", "sandbox", "evaluator"]
)


@CLI
@given(
    evaluators=st.lists(evaluator_entries, max_size=3) | json_values,
    extra=st.dictionaries(config_keys, json_values, max_size=2),
    encoding=st.sampled_from(["utf-8", "utf-8", "latin-1", "utf-16"]),
)
@example(evaluators=["ExactMatch", "ExactMatch"], extra={}, encoding="utf-8")  # once unplaced
def test_run_on_generated_configs_ends_clearly(
    folder: Path, evaluators: Any, extra: dict[str, Any], encoding: str
) -> None:
    config = {"system": "bot:answer", "dataset": "data/cases.jsonl", "evaluators": evaluators}
    try:
        text = yaml.safe_dump({**config, **extra}, allow_unicode=True)
    except yaml.YAMLError:
        return
    (folder / "fuzzed-config.yaml").write_bytes(encoded(text, encoding))
    done = run_user(
        ["oloproof", "run", "fuzzed-config.yaml", "--no-record"], cwd=folder, timeout=120
    )
    _ended_clearly(done, result_said="metric")
    if done.returncode == 3:
        assert "fuzzed-config.yaml" in done.stderr, done.stderr
