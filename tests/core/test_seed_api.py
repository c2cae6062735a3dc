"""The Python API page's examples, written as the page writes them, printed output included."""
# The page's own import lines are kept as it writes them, unsorted.
# ruff: noqa: I001

from __future__ import annotations

import pytest

from oloproof import DeclarationError, OloproofError
from oloproof import evaluate, system, current_case
from oloproof.evaluators import ExactMatch, Contains, JsonSchema, Regex, RubricJudge, evaluator


@system(name="support-bot", version="1")
def answer(case):
    return {"label": "refund" if "refund" in case["question"].lower() else "other"}


def print_metrics(result):
    for metric in result.metrics:
        print(metric.metric, metric.estimate, metric.interval, metric.n_observed, metric.n_missing)


def test_thirty_correct_cases_print_the_exact_interval(example_dir, capsys):
    result = evaluate(
        system=answer,
        dataset="data/example.jsonl",
        evaluators=[ExactMatch(criterion="exact_label", field="label")],
    )

    print_metrics(result)

    assert capsys.readouterr().out == ("exact_label 1.0 lower=0.8842966917779722 upper=1.0 30 0\n")


def test_a_system_that_always_raises_yields_missing_not_wrong(example_dir, capsys):
    @system(name="support-bot", version="broken")
    def broken(case):
        raise ConnectionError("model endpoint unreachable")

    result = evaluate(
        system=broken,
        dataset="data/example.jsonl",
        evaluators=[ExactMatch(criterion="exact_label", field="label")],
    )

    print_metrics(result)
    assert capsys.readouterr().out == "exact_label None lower=0.0 upper=1.0 0 30\n"
    assert result.gate is None
    assert {case.error.type for case in result.cases} == {"ConnectionError"}
    assert "model endpoint unreachable" in result.cases[0].error.traceback


def test_custom_evaluator_from_the_page(example_dir, capsys):
    @evaluator(criterion="known_label", reads=("output",))
    def known_label(case):
        return case.output["label"] in {"refund", "other"}

    result = evaluate(system=answer, dataset="data/example.jsonl", evaluators=[known_label])

    print_metrics(result)
    assert capsys.readouterr().out == ("known_label 1.0 lower=0.8842966917779722 upper=1.0 30 0\n")


def test_output_expected_signature_is_rejected_when_decorated_with_the_working_form():
    with pytest.raises(DeclarationError) as caught:

        @evaluator(criterion="label_ok")
        def f(output, expected):
            return output == expected

    message = str(caught.value)
    assert "exactly one argument, the case" in message
    assert "def known_label(case):" in message
    assert "case.output" in message


def test_the_system_receives_the_input_and_never_expected(example_dir):
    @system(name="probe", version="1")
    def probe(case):
        try:
            _ = current_case().expected
            hidden = "reachable"
        except OloproofError as exc:
            hidden = str(exc)
        return {
            "label": "other",
            "keys": sorted(case),
            "expected": hidden,
            "same_input": current_case().input is case,
        }

    result = evaluate(
        system=probe,
        dataset="data/example.jsonl",
        evaluators=[ExactMatch(criterion="exact_label", field="label")],
    )

    assert len(result.cases) == 30
    assert all(case.output["keys"] == ["question"] for case in result.cases)
    assert all("not available inside a system" in case.output["expected"] for case in result.cases)
    assert all(case.output["same_input"] for case in result.cases)


def test_the_rest_of_the_seed_import_line_is_usable(example_dir):
    assert RubricJudge(criterion="polite", rubric="The answer is polite.").io_bound
    result = evaluate(
        system=answer,
        dataset="data/example.jsonl",
        evaluators=[
            Contains(criterion="mentions", field="label", value="e"),
            Regex(criterion="lowercase", field="label", pattern="^[a-z]+$", full_match=True),
            JsonSchema(criterion="shape", schema={"type": "object", "required": ["label"]}),
        ],
    )
    assert [m.estimate for m in result.metrics] == [1.0, 1.0, 1.0]
