from __future__ import annotations

import pytest

from oloproof import DeclarationError, UndeclaredReadError, evaluate
from oloproof.evaluators import Contains, ExactMatch, JsonSchema, Regex, evaluator

ROWS = [
    {
        "id": "r1",
        "input": {"q": "a"},
        "expected": {"label": "Refund", "schema": {"type": "object", "required": ["label"]}},
    },
    {
        "id": "r2",
        "input": {"q": "b"},
        "expected": {"label": "other", "schema": {"type": "object", "required": ["missing_key"]}},
    },
]


def run(evaluators, output, store, rows=ROWS):
    return evaluate(lambda case: output, rows, evaluators, store=store)


def outcome(result, criterion):
    return [case.verdicts[criterion].value for case in result.cases]


def test_exact_match_on_a_field_with_normalisation_and_feedback(store):
    result = run(
        [
            ExactMatch(criterion="strict", field="label"),
            ExactMatch(criterion="loose", field="label", ignore_case=True, strip=True),
        ],
        {"label": " refund "},
        store,
    )
    assert outcome(result, "strict") == [0.0, 0.0]
    assert outcome(result, "loose") == [1.0, 0.0]
    assert result.cases[1].verdicts["strict"].feedback == "Expected 'other', got ' refund '."


def test_contains_regex_and_json_schema(store):
    result = run(
        [
            Contains(criterion="says_refund", value="REFUND"),
            Contains(criterion="says_expected", expected_field="label"),
            Regex(criterion="starts_with_brace", pattern=r"^\{"),
            JsonSchema(criterion="per_case_schema", expected_field="schema"),
        ],
        '{"label": "refund"}',
        store,
    )
    assert outcome(result, "says_refund") == [1.0, 1.0]
    assert outcome(result, "says_expected") == [1.0, 0.0]
    assert outcome(result, "starts_with_brace") == [1.0, 1.0]
    assert outcome(result, "per_case_schema") == [1.0, 0.0]
    assert "missing_key" in result.cases[1].verdicts["per_case_schema"].feedback


def test_json_schema_reports_unparseable_text(store):
    result = run([JsonSchema(criterion="shape", schema={"type": "object"})], "not json", store)
    assert result.cases[0].verdicts["shape"].feedback.startswith("The output is not valid JSON")


def test_builtin_declaration_errors_are_clear():
    with pytest.raises(DeclarationError, match="needs value='text' or expected_field"):
        Contains(criterion="c")
    with pytest.raises(DeclarationError, match="invalid pattern"):
        Regex(criterion="r", pattern="(")
    with pytest.raises(DeclarationError, match="invalid schema"):
        JsonSchema(criterion="s", schema={"type": 12})
    with pytest.raises(DeclarationError, match="no dots"):
        ExactMatch(criterion="a.b")


def test_reading_an_undeclared_part_is_an_error_naming_the_fix(store):
    @evaluator(criterion="sneaky", reads=("output",))
    def sneaky(case):
        return case.output == case.expected

    with pytest.raises(UndeclaredReadError) as caught:
        run([sneaky], {"label": "x"}, store)
    assert "read case.expected but declared reads=('output',)" in str(caught.value)
    assert "reads=('output', 'expected')" in str(caught.value)


def test_unknown_parts_in_reads_are_rejected():
    with pytest.raises(ValueError, match="unknown case part 'outputs'"):

        @evaluator(criterion="typo", reads=("outputs",))
        def typo(case):
            return True


def test_score_evaluators_are_checked_against_their_range(store):
    @evaluator(criterion="length", reads=("output",), value_type="score", score_range=(0, 10))
    def length(case):
        return len(case.output["text"])

    ok = run([length], {"text": "four"}, store)
    assert ok.metric("length").estimate == 4.0
    assert ok.metric("length").interval.upper <= 10.0
    too_long = run([length], {"text": "far too long text"}, store)
    verdict = too_long.cases[0].verdicts["length"]
    assert verdict.missing
    assert "outside its range 0..10" in verdict.error
    assert "score_range=(lo, hi)" in verdict.error


def test_a_pass_fail_evaluator_returning_a_number_is_a_contract_error(store):
    @evaluator(criterion="numeric", reads=("output",))
    def numeric(case):
        return 1

    result = run([numeric], {}, store)
    assert "returns True or False" in result.cases[0].verdicts["numeric"].error


def test_an_evaluator_that_raises_makes_the_verdict_missing_not_failed(store):
    # Reads the input too: cases with the same key share one judgement.
    @evaluator(criterion="fragile", reads=("input", "output"))
    def fragile(case):
        if case.id == "r2":
            raise KeyError("label")
        return True

    result = run([fragile], {}, store)
    metric = result.metric("fragile")
    assert (metric.estimate, metric.n_observed, metric.n_missing) == (1.0, 1, 1)
    assert result.cases[1].verdicts["fragile"].error == "KeyError: 'label'"
    assert "raise KeyError" in result.cases[1].verdicts["fragile"].traceback
    assert result.provenance["judging"]["fragile"]["failed"] == 1


def test_evaluator_version_tracks_its_file_and_parameters(tmp_path):
    module = tmp_path / "checks_v.py"
    module.write_text(
        "from oloproof.evaluators import evaluator\n"
        "@evaluator(criterion='c', reads=('output',))\n"
        "def c(case):\n    return True\n"
    )
    from oloproof_core._util.imports import load_object

    first = load_object("checks_v.py:c", base_dir=str(tmp_path)).version
    assert ExactMatch(field="a").version != ExactMatch(field="b").version
    assert ExactMatch(field="a").version == ExactMatch(field="a").version
    module.write_text(module.read_text() + "# an edit\n")
    import sys

    from oloproof_core._util.imports import namespace_for

    del sys.modules[f"{namespace_for(str(tmp_path))}.checks_v"]
    second = load_object("checks_v.py:c", base_dir=str(tmp_path)).version
    assert first != second


def test_duplicate_criteria_and_non_evaluators_are_rejected(store):
    with pytest.raises(DeclarationError, match="share the criterion 'x'"):
        run([ExactMatch(criterion="x"), ExactMatch(criterion="x", field="a")], {}, store)
    with pytest.raises(DeclarationError, match="decorated with @evaluator"):
        run([lambda case: True], {}, store)
    with pytest.raises(DeclarationError, match="evaluators is empty"):
        run([], {}, store)
