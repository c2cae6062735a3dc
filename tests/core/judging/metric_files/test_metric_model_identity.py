"""A metric that calls a model keeps its cached verdicts only while that model stays the same."""

from __future__ import annotations

from oloproof import evaluate, system
from oloproof.evaluators import MetricFile, RubricJudge
from tests.support.fake_openai import Reply

ROWS = [{"id": f"case_{i}", "input": {"question": f"q{i}"}} for i in range(3)]

LLM_METRIC = """
from skynet import llm

def score(input, output, expected=None):
    verdict = llm("Answer PASS or FAIL.", input=str(output))
    return (1.0 if verdict.startswith("PASS") else 0.0), {"feedback": verdict}
"""

PLAIN_METRIC = """
def score(input, output, expected=None):
    return 1.0, {"feedback": "fine"}
"""


@system(name="echo", version="1")
def echo(case):
    return case["question"]


def judged(result, criterion="metric"):
    return result.provenance["judging"][criterion]["judged"]


def test_changing_the_metric_model_re_judges_and_keeping_it_reuses_the_cache(
    models_on, write_metric, store, monkeypatch
):
    models_on.default = Reply("PASS. Fine.")
    metric = MetricFile(write_metric(LLM_METRIC), criterion="metric")

    first = evaluate(echo, ROWS, [metric], store=store)
    same = evaluate(echo, ROWS, [metric], store=store)
    assert (judged(first), judged(same), models_on.request_count) == (3, 0, 3)
    version = metric.version

    monkeypatch.setenv("OLOPROOF_METRIC_MODEL", "a-better-judge")
    changed = evaluate(echo, ROWS, [metric], store=store)

    assert judged(changed) == 3
    assert metric.version != version
    assert models_on.models_asked()[-3:] == ["a-better-judge"] * 3
    assert metric.parameters()["models"] == {
        "metric": {"model": "a-better-judge", "base_url": models_on.base_url}
    }


def test_moving_the_metric_model_to_another_server_is_a_new_version(
    models_on, write_metric, monkeypatch
):
    metric = MetricFile(write_metric(LLM_METRIC))
    version = metric.version

    metric.refresh()
    assert metric.version == version
    monkeypatch.setenv("OLOPROOF_METRIC_BASE_URL", "http://127.0.0.1:9/v1")
    metric.refresh()

    assert metric.version != version


def test_a_metric_that_calls_no_model_is_untouched_by_model_settings(
    models_on, write_metric, monkeypatch
):
    metric = MetricFile(write_metric(PLAIN_METRIC))
    version = metric.version

    monkeypatch.setenv("OLOPROOF_METRIC_MODEL", "another")
    metric.refresh()

    assert metric.version == version
    assert "models" not in metric.parameters()


def test_a_metric_importing_chat_depends_on_every_role(models_on, write_metric):
    source = "from oloproof.models import chat\n" + PLAIN_METRIC

    metric = MetricFile(write_metric(source))

    assert set(metric.parameters()["models"]) == {"system", "reflection", "metric", "judge"}


def test_the_judges_version_covers_its_endpoint(models_on, monkeypatch):
    judge = RubricJudge(criterion="polite", rubric="Is it polite?")
    version = judge.version

    monkeypatch.setenv("OLOPROOF_JUDGE_BASE_URL", "http://127.0.0.1:9/v1")
    judge.refresh()

    assert judge.version != version
    assert judge.parameters()["base_url"] == "http://127.0.0.1:9/v1"
