"""The verdict cache: re-judging happens exactly when an evaluator or what it reads changed."""

from __future__ import annotations

import sys

from oloproof import evaluate, system
from oloproof.evaluators import evaluator
from oloproof_core._util.imports import load_object, namespace_for

ROWS = [{"id": f"c{i}", "input": {"n": i}, "expected": {"even": i % 2 == 0}} for i in range(10)]


def make_counting_evaluators(tmp_path):
    path = tmp_path / "counted_checks.py"
    path.write_text(
        "from oloproof.evaluators import evaluator\n"
        "CALLS = []\n"
        "@evaluator(criterion='parity', reads=('input', 'output', 'expected'))\n"
        "def parity(case):\n"
        "    CALLS.append(case.id)\n"
        "    return case.output['even'] == case.expected['even']\n"
    )
    return path


def load_parity(tmp_path):
    sys.modules.pop(f"{namespace_for(str(tmp_path))}.counted_checks", None)
    return load_object("counted_checks.py:parity", base_dir=str(tmp_path))


@system(name="parity-bot", version="1")
def parity_bot(case):
    return {"even": case["n"] % 2 == 0}


def test_unchanged_evaluator_on_unchanged_outputs_is_not_called_again(tmp_path, store):
    make_counting_evaluators(tmp_path)
    parity = load_parity(tmp_path)
    calls = sys.modules[f"{namespace_for(str(tmp_path))}.counted_checks"].CALLS

    # In this process, where its calls can be counted (the cache is the same either way).
    first = evaluate(parity_bot, ROWS, [parity], store=store, isolation="thread")
    assert len(calls) == 10
    second = evaluate(parity_bot, ROWS, [parity], store=store, isolation="thread")

    assert len(calls) == 10
    assert second.provenance["judging"]["parity"] == {
        "judged": 0,
        "cached": 10,
        "failed": 0,
        "skipped": 0,
    }
    assert all(case.verdicts["parity"].cached for case in second.cases)
    assert second.metric("parity") == first.metric("parity")


def test_editing_one_evaluators_file_rejudges_only_that_evaluator(tmp_path, store):
    path = make_counting_evaluators(tmp_path)
    parity = load_parity(tmp_path)

    @evaluator(criterion="small", reads=("output",))
    def small(case):
        return True

    evaluate(parity_bot, ROWS, [parity, small], store=store)
    path.write_text(path.read_text() + "# reviewed\n")
    edited = load_parity(tmp_path)
    result = evaluate(parity_bot, ROWS, [edited, small], store=store)

    assert edited.version != parity.version
    assert result.provenance["judging"]["parity"]["judged"] == 10
    assert result.provenance["judging"]["small"]["cached"] == 10


def test_the_cache_key_covers_only_the_parts_an_evaluator_reads(store):
    output_calls = []
    expected_calls = []

    @evaluator(criterion="reads_output", reads=("output",))
    def reads_output(case):
        output_calls.append(case.id)
        return True

    @evaluator(criterion="reads_expected", reads=("output", "expected"))
    def reads_expected(case):
        expected_calls.append(case.id)
        return True

    first = evaluate(parity_bot, ROWS, [reads_output, reads_expected], store=store)
    relabelled = [dict(row, expected={"even": not row["expected"]["even"]}) for row in ROWS]
    second = evaluate(parity_bot, relabelled, [reads_output, reads_expected], store=store)

    # Ten cases, two distinct outputs (and two distinct output-expected pairs per run):
    # each distinct key is judged once, and relabelling changes only the second key. The
    # evaluators judge in processes of their own: the tallies count their calls.
    judged = [
        (
            run.provenance["judging"]["reads_output"]["judged"],
            run.provenance["judging"]["reads_expected"]["judged"],
        )
        for run in (first, second)
    ]
    assert judged == [(2, 2), (0, 2)]
    assert output_calls == expected_calls == []  # called there, never in this process


def test_a_new_output_is_judged_again_and_failures_are_not_cached(store):
    calls = []

    @evaluator(criterion="flaky", reads=("output",))
    def flaky(case):
        calls.append(case.id)
        if len(calls) == 1:
            raise TimeoutError("judge timed out")
        return True

    # In this process: the evaluator's state (its first call fails) is this process's.
    evaluate(parity_bot, ROWS[:2], [flaky], store=store, isolation="thread")
    again = evaluate(parity_bot, ROWS[:2], [flaky], store=store, isolation="thread")
    assert again.provenance["judging"]["flaky"] == {
        "judged": 1,
        "cached": 1,
        "failed": 0,
        "skipped": 0,
    }

    @system(name="parity-bot", version="2")
    def changed(case):
        return {"even": True, "version": 2}

    evaluate(changed, ROWS[:2], [flaky], store=store, isolation="thread")
    assert len(calls) == 4  # both cases now share one new output: judged once
