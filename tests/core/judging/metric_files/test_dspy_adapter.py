"""DSPy programs as systems and metric files as DSPy/GEPA metrics, offline with DummyLM."""

from __future__ import annotations

import pytest

dspy = pytest.importorskip(
    "dspy", reason="DSPy is an optional extra (pip install 'oloproof[dspy]'); not installed"
)

from dspy.utils import DummyLM  # noqa: E402

from oloproof import evaluate  # noqa: E402
from oloproof.evaluators import MetricFile  # noqa: E402
from oloproof_core.optimize._dspy_adapter import dspy_examples, dspy_metric, dspy_system  # noqa: E402

ROWS = [
    {"id": "a", "input": {"question": "Can I get a refund?"}, "expected": {"label": "refund"}},
    {"id": "b", "input": {"question": "Where is my parcel?"}, "expected": {"label": "other"}},
    {"id": "c", "input": {"question": "Refund for parcel?"}, "expected": {"label": "other"}},
]
LABEL_METRIC = """\
def score(input, output, expected=None):
    want = expected["label"]
    if output == want:
        return 1.0, {"feedback": "Correct."}
    return 0.0, {"feedback": f"Expected {want!r}, got {output!r}."}
"""
"""The metric page's exact-match metric, verbatim: a one-field program's output is the
field's value."""


@pytest.fixture
def dummy_lm():
    """DSPy's own offline LM answering refund, other, refund in turn."""
    lm = DummyLM([{"label": "refund"}, {"label": "other"}, {"label": "refund"}] * 2)
    dspy.configure(lm=lm)
    yield lm
    dspy.configure(lm=None)


def test_a_dspy_program_is_the_system_under_test(dummy_lm, write_metric, store):
    program = dspy.Predict("question -> label")
    metric = MetricFile(write_metric(LABEL_METRIC), criterion="label")

    result = evaluate(
        dspy_system(program, name="classifier", version="1", price_in=1, price_out=2),
        ROWS,
        [metric],
        store=store,
        concurrency=1,
        isolation="thread",  # DSPy's own usage tracker is what this reads
    )

    assert [case.output for case in result.cases] == ["refund", "other", "refund"]
    assert result.metrics[0].estimate == pytest.approx(2 / 3)
    assert result.cases[2].verdicts["label"].feedback == "Expected 'other', got 'refund'."
    for case in result.cases:
        assert case.error is None
        assert [call.model for call in case.measurements.model_calls] == ["dummy"]
        assert case.cost_usd == 0.0  # the dummy LM reports zero tokens, and a price is set
    assert result.provenance["system"]["name"] == "classifier"


def test_without_a_price_the_programs_cost_is_unmeasured_not_zero(
    dummy_lm, write_metric, store, monkeypatch
):
    for name in ("OLOPROOF_SYSTEM_MODEL", "OLOPROOF_DEFAULT_MODEL"):
        monkeypatch.delenv(name, raising=False)
    program = dspy.Predict("question -> label")
    result = evaluate(
        dspy_system(program, name="classifier"),
        ROWS[:1],
        [MetricFile(write_metric(LABEL_METRIC), criterion="label")],
        store=store,
        concurrency=1,
        isolation="thread",
    )
    assert result.cases[0].cost_usd is None


def test_a_dspy_program_runs_in_its_sandbox_with_the_configured_model(
    dummy_lm, write_metric, store
):
    """The program travels by value; DSPy's configured model, a setting of this process,
    travels with it."""
    result = evaluate(
        dspy_system(dspy.Predict("question -> label"), name="classifier", version="1"),
        ROWS,
        [MetricFile(write_metric(LABEL_METRIC), criterion="label")],
        store=store,
        concurrency=1,
    )

    execution = result.provenance["execution"]
    assert (execution["isolation"], execution["start"]) == ("process", "value")
    assert execution["measurements"] == "protected"
    assert [case.output for case in result.cases] == ["refund", "other", "refund"]


def test_a_metric_file_serves_dspy_evaluate_and_gepa(dummy_lm, write_metric):
    program = dspy.Predict("question -> label")
    metric = dspy_metric(write_metric(LABEL_METRIC))
    devset = dspy_examples(ROWS)

    evaluation = dspy.Evaluate(devset=devset, metric=metric, num_threads=1)(program)

    assert evaluation.score == pytest.approx(100 * 2 / 3, abs=0.01)
    example = devset[1]
    wrong = dspy.Prediction(label="refund")
    assert metric(example, wrong) == 0.0
    assert metric(example, dspy.Prediction(label="other"), None) == 1.0
    feedback = metric(example, wrong, None, "self", [])
    assert isinstance(feedback, dspy.Prediction)
    assert (feedback.score, feedback.feedback) == (0.0, "Expected 'other', got 'refund'.")


def test_examples_keep_inputs_and_labels_apart():
    (example,) = dspy_examples(ROWS[:1])
    assert example.inputs().toDict() == {"question": "Can I get a refund?"}
    assert example.labels().toDict() == {"label": "refund"}
    clash = [{"id": "x", "input": {"label": "a"}, "expected": {"label": "b"}}]
    with pytest.raises(Exception, match="'label' is both an input and an expected field"):
        dspy_examples(clash)
