from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from oloproof.cli import main
from oloproof_core.results.reading import load_result

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "support_bot"


@pytest.fixture
def project(tmp_path, monkeypatch):
    target = tmp_path / "bot"
    shutil.copytree(EXAMPLE, target)
    monkeypatch.chdir(tmp_path)
    return target


def write_config(project, text):
    path = project / "broken.yaml"
    path.write_text(text)
    return str(path)


def test_run_prints_the_table_and_writes_json(project, capsys, tmp_path):
    out = tmp_path / "result.json"
    code = main(["run", str(project / "oloproof.yaml"), "--json", str(out), "--no-progress"])
    printed = capsys.readouterr().out
    assert code == 0
    assert "exact_label  1.000     [0.884, 1.000]  30        0" in printed
    assert "known_label" in printed
    loaded = load_result(str(out))
    assert loaded.metric("exact_label").interval.lower == 0.8842966917779722
    assert len(loaded.cases) == 30
    assert loaded.provenance["system"] == {
        "name": "support-bot",
        "version": "1",
        "import_path": "support_bot:answer",
        "is_async": False,
    }


def test_json_to_stdout(project, capsys):
    assert main(["run", str(project / "oloproof.yaml"), "--json", "-"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["metrics"][0]["metric"] == "exact_label"
    assert data["gate"] is None


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            "system: support_bot:answer\ndataset: data/example.jsonl\nevaluators: [ExactMatch]\n"
            "concurency: 4\n",
            "broken.yaml:4: unknown key 'concurency'",
        ),
        ("system: support_bot:answer\nevaluators: [ExactMatch]\n", "missing key 'dataset'"),
        (
            "system: support_bot:nope\ndataset: data/example.jsonl\nevaluators: [ExactMatch]\n",
            "broken.yaml:1: system 'support_bot:nope': support_bot has no attribute 'nope'",
        ),
        (
            "system: support_bot:answer\ndataset: data/example.jsonl\nevaluators:\n"
            "  - Exact: {field: label}\n",
            "unknown evaluator 'Exact'",
        ),
        (
            "system: support_bot:answer\ndataset: data/example.jsonl\nevaluators:\n"
            "  - ExactMatch: {fields: label}\n",
            "has no parameter 'fields' (did you mean 'field'?)",
        ),
        (
            "system: support_bot:answer\ndataset: data/example.jsonl\nevaluators: [ExactMatch]\n"
            "confidence: 95\n",
            "broken.yaml:4: 'confidence' must be between 0 and 1",
        ),
        ("system: support_bot:answer\ndataset: [oops\n", "broken.yaml:3: invalid YAML"),
        (
            "system: support_bot:answer\ndataset: data/missing.jsonl\nevaluators: [ExactMatch]\n",
            "broken.yaml:2: dataset 'data/missing.jsonl' not found: looked for ",
        ),
    ],
)
def test_bad_configs_exit_3_with_a_message_naming_the_key(project, capsys, text, message):
    code = main(["run", write_config(project, text)])
    error = capsys.readouterr().err
    assert code == 3
    assert message in error
    assert "Traceback" not in error


def test_usage_errors_also_exit_3(capsys):
    with pytest.raises(SystemExit) as caught:
        main(["run", "--concurrency", "many", "x.yaml"])
    assert caught.value.code == 3


def test_measured_cost_survives_the_json_round_trip(tmp_path):
    from oloproof import evaluate
    from oloproof.evaluators import ExactMatch
    from oloproof_core.cases.context import current_case
    from oloproof_core.cases.observations import ModelCall
    from oloproof_core.results.store import InMemoryStore

    def priced(case):
        current_case().record_model_call(
            ModelCall(
                role="system",
                model="m",
                input_tokens=10,
                output_tokens=5,
                cost_usd=0.002,
                latency_ms=3.0,
            )
        )
        return {"label": "x"}

    result = evaluate(
        priced,
        [{"id": "a", "input": {}, "expected": {"label": "x"}}],
        [ExactMatch(criterion="label", field="label")],
        store=InMemoryStore(),
        isolation="thread",  # a call it reports itself counts only in this process
    )
    path = tmp_path / "run.json"
    result.to_json(str(path))
    loaded = load_result(str(path))
    assert loaded.cases[0].cost_usd == result.cases[0].cost_usd == 0.002
    assert loaded.cases[0].measurements.model_calls[0].input_tokens == 10
