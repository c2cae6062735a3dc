"""What an evaluator judging in a process of its own can reach: no secret of the
operator's, neither the store nor the dataset's file, and models only through the
gateway, metered under its role.

Every run here starts real evaluator processes (in the sandbox where this machine has
one); no test asserts how long anything took.
"""

from __future__ import annotations

import json

import pytest

from oloproof import evaluate
from oloproof.evaluators import MetricFile
from oloproof_core import InMemoryStore
from oloproof_core.execution.isolation import keep_from_systems
from tests.core.judging.contained import echo, rows, write_metric
from tests.support.fake_openai import Reply

SECRETS = {
    "OPENAI_API_KEY": "sk-operator-openai",
    "ANTHROPIC_API_KEY": "sk-operator-anthropic",
    "OLOPROOF_JUDGE_API_KEY": "sk-operator-judge",
    "PGPASSWORD": "operator-pg-password",
    "DATABASE_URL": "postgresql://oloproof:operator-pg-password@db/oloproof",
}


def test_an_evaluator_reading_the_environment_finds_no_secret_of_the_operator(
    tmp_path, monkeypatch
):
    for name, value in SECRETS.items():
        monkeypatch.setenv(name, value)
    path = write_metric(
        tmp_path,
        """\
        import json
        import os

        def score(input, output, expected=None):
            return 1.0, {"feedback": json.dumps(dict(os.environ))}
        """,
        name="environment.py",
    )

    result = evaluate(echo, rows("a"), [MetricFile(path)], store=InMemoryStore())

    seen = json.loads(result.cases[0].verdicts["environment"].feedback)
    leaked = [name for name, value in SECRETS.items() if value in json.dumps(seen)]
    assert leaked == []
    assert "PGPASSWORD" not in seen
    assert seen["OPENAI_API_KEY"].startswith("olo-gw-")  # the gateway's key, not the provider's


def test_an_evaluator_can_read_neither_the_store_nor_the_datasets_file(tmp_path):
    """Its folder is shown to it (the metric file lies there: it imports a module and
    reads a file beside it), the store's and the dataset's files there are covered."""
    store_folder = tmp_path / "store"
    store_folder.mkdir()
    (store_folder / "oloproof.sqlite3").write_text("the store", encoding="utf-8")
    keep_from_systems(store_folder)
    dataset = tmp_path / "cases.jsonl"
    dataset.write_text("\n".join(json.dumps(row) for row in rows("a")), encoding="utf-8")
    (tmp_path / "notes.txt").write_text("beside the metric", encoding="utf-8")
    (tmp_path / "wording.py").write_text("WORD = 'imported'\n", encoding="utf-8")
    path = write_metric(
        tmp_path,
        f"""\
        import json

        from wording import WORD

        def score(input, output, expected=None):
            opened = []
            for path in ({str(store_folder / "oloproof.sqlite3")!r}, {str(dataset)!r},
                         {str(tmp_path / "notes.txt")!r}):
                try:
                    with open(path, encoding="utf-8") as handle:
                        opened.append(handle.read())
                except OSError as exc:
                    opened.append(type(exc).__name__)
            return 1.0, {{"feedback": json.dumps([*opened, WORD])}}
        """,
        name="snoops.py",
    )

    result = evaluate(echo, str(dataset), [MetricFile(path)], store=InMemoryStore())

    execution = result.provenance["evaluator_execution"]
    if not execution["sandbox"]["on"]:
        pytest.skip(f"no sandbox on this machine: {execution['sandbox']['reason']}")
    opened = json.loads(result.cases[0].verdicts["snoops"].feedback)
    assert opened == ["PermissionError", "PermissionError", "beside the metric", "imported"]


def test_a_metrics_model_calls_go_through_the_gateway_metered_under_its_role(
    tmp_path, models_on, monkeypatch
):
    monkeypatch.setenv("OLOPROOF_DEFAULT_API_KEY", "sk-operator-provider")
    path = write_metric(
        tmp_path,
        """\
        import os

        from skynet import llm

        def score(input, output, expected=None):
            said = llm("Answer PASS or FAIL.", input=output)
            return (1.0 if said.startswith("PASS") else 0.0), {
                "feedback": os.environ["OLOPROOF_METRIC_API_KEY"][:7]
            }
        """,
        name="judged.py",
    )
    models_on.respond_with(lambda request: Reply("PASS. " + request.user_text))

    result = evaluate(echo, rows("one", "two"), [MetricFile(path)], store=InMemoryStore())

    for case in result.cases:
        verdict = case.verdicts["judged"]
        assert (verdict.value, verdict.feedback) == (1.0, "olo-gw-")
        (call,) = case.measurements.model_calls
        assert (call.role, call.input_tokens, call.output_tokens) == ("metric", 10, 5)
        assert call.cost_usd == pytest.approx((10 * 1 + 5 * 2) / 1e6)
    assert {request.headers.get("Authorization") for request in models_on.requests} == {
        "Bearer sk-operator-provider"
    }
    assert result.provenance["model_usage"]["metric"]["calls"] == 2
