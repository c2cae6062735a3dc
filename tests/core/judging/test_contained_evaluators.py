"""Evaluators judge in processes of their own: each verdict within its time limit, an
evaluator's exit or crash its own verdict's loss, and a cached verdict never starting a
process (what such a process can reach: test_contained_evaluator_reach.py).

Every run here starts real evaluator processes (in the sandbox where this machine has
one); no test asserts how long anything took.
"""

from __future__ import annotations

import os

import pytest

from oloproof import ConfigError, evaluate, system
from oloproof.evaluators import ExactMatch, JsonSchema, MetricFile, Regex, evaluator
from oloproof_core import InMemoryStore
from tests.core.judging.contained import BACKTRACKS, echo, rows, verdicts, write_metric


def test_a_metric_that_sleeps_for_ever_loses_that_verdict_at_the_runs_timeout(tmp_path):
    path = write_metric(
        tmp_path,
        """\
        import time

        def score(input, output, expected=None):
            while output == "stuck":
                time.sleep(1)
            return 1.0, {"feedback": "fine"}
        """,
    )

    result = evaluate(
        echo, rows("ok", "stuck", "fine"), [MetricFile(path)], store=InMemoryStore(), timeout=2
    )

    judged = verdicts(result, tmp_path.name)
    assert [judged["c0"].value, judged["c2"].value] == [1.0, 1.0]
    assert judged["c1"].missing
    assert judged["c1"].error.startswith(
        "TimeoutError: the evaluator took longer than its 2 s time limit per verdict "
        "(the run's timeout"
    )
    assert result.metric(tmp_path.name).n_missing == 1
    assert result.provenance["evaluator_timeout_s"] == 2


def test_a_catastrophic_regular_expression_in_a_metric_file_is_cut_off(tmp_path):
    path = write_metric(
        tmp_path,
        """\
        import re

        def score(input, output, expected=None):
            matched = re.match(r"(a+)+$", output)
            return (1.0 if matched else 0.0), {"feedback": "checked"}
        """,
        name="pattern.py",
    )

    result = evaluate(
        echo, rows("aaa", BACKTRACKS), [MetricFile(path)], store=InMemoryStore(), timeout=1
    )

    judged = verdicts(result, "pattern")
    assert judged["c0"].value == 1.0
    assert judged["c1"].error.startswith("TimeoutError: the evaluator took longer than its 1 s")


def test_a_regex_evaluator_runs_contained_so_an_output_that_makes_it_backtrack_is_cut_off():
    """The pattern is the user's and the text the system's: together they can hang."""
    check = Regex(criterion="only_as", pattern=r"(a+)+$", full_match=True)

    result = evaluate(
        echo, rows("aaaa", BACKTRACKS, "b"), [check], store=InMemoryStore(), timeout=1
    )

    judged = verdicts(result, "only_as")
    assert [judged["c0"].value, judged["c2"].value] == [1.0, 0.0]
    assert judged["c1"].error.startswith("TimeoutError: the evaluator took longer than its 1 s")


def test_a_json_schema_with_a_pattern_judges_contained_and_one_without_in_this_process():
    @system(name="wrapped", version="1")
    def wrapped(case):
        return {"text": case["text"]}

    text = {"type": "string", "pattern": "^(a+)+$"}
    patterned = JsonSchema(criterion="as_only", schema={"properties": {"text": text}})
    plain = JsonSchema(criterion="a_string", schema={"properties": {"text": {"type": "string"}}})

    result = evaluate(
        wrapped, rows("aaa", BACKTRACKS), [patterned, plain, ExactMatch(criterion="same")],
        store=InMemoryStore(), timeout=1,
    )  # fmt: skip

    assert verdicts(result, "as_only")["c0"].value == 1.0
    assert verdicts(result, "as_only")["c1"].error.startswith("TimeoutError: the evaluator")
    assert [verdict.value for verdict in verdicts(result, "a_string").values()] == [1.0, 1.0]
    contained = result.provenance["evaluator_execution"]["evaluators"]
    assert sorted(contained) == ["as_only"]


def test_an_evaluator_that_swallows_its_limit_is_stopped_by_killing_its_process():
    @evaluator(criterion="stubborn", reads=("output",))
    def stubborn(case):
        while case.output == "stuck":
            try:
                while True:
                    pass
            except BaseException:  # what a careless retry loop does
                continue
        return True

    result = evaluate(
        echo, rows("a", "stuck", "b", "c"), [stubborn], store=InMemoryStore(), timeout=1
    )

    judged = verdicts(result, "stubborn")
    assert [judged[case].value for case in ("c0", "c2", "c3")] == [1.0, 1.0, 1.0]
    assert judged["c1"].error.startswith("TimeoutError: the evaluator took longer than its 1 s")


@pytest.mark.parametrize(
    ("raised", "named"),
    [("SystemExit(3)", "SystemExit: 3"), ("KeyboardInterrupt()", "KeyboardInterrupt")],
)
def test_system_exit_or_keyboard_interrupt_raised_by_an_evaluator_loses_only_its_verdict(
    raised, named
):
    @evaluator(criterion="exits", reads=("output",))
    def exits(case):
        if case.output == "bye":
            raise eval(raised)
        return True

    result = evaluate(echo, rows("a", "bye", "b"), [exits], store=InMemoryStore())

    judged = verdicts(result, "exits")
    assert [judged["c0"].value, judged["c2"].value] == [1.0, 1.0]
    assert judged["c1"].error.startswith(named)
    assert "raised by the evaluator's code: this verdict is missing" in judged["c1"].error
    assert result.metric("exits").n_missing == 1


def test_an_evaluator_that_ends_its_process_loses_only_its_own_verdict():
    @evaluator(criterion="ends", reads=("output",))
    def ends(case):
        if case.output == "crash":
            os._exit(7)
        return case.output != "no"

    texts = [f"text {i}" for i in range(40)]
    texts[17], texts[30] = "crash", "no"
    result = evaluate(echo, rows(*texts), [ends], store=InMemoryStore())

    judged = verdicts(result, "ends")
    assert judged["c17"].error == (
        "SystemProcessDied: the evaluator's process exited with status 7 while judging this case"
    )
    assert judged["c30"].value == 0.0
    assert [case for case, verdict in judged.items() if verdict.missing] == ["c17"]


def test_evaluator_timeout_is_the_limit_when_given_and_says_so():
    @evaluator(criterion="slow", reads=("output",))
    def slow(case):
        import time

        time.sleep(30 if case.output == "slow" else 0)
        return True

    result = evaluate(
        echo, rows("slow", "quick"), [slow], store=InMemoryStore(), evaluator_timeout=1
    )

    judged = verdicts(result, "slow")
    assert judged["c0"].error == (
        "TimeoutError: the evaluator took longer than its 1 s time limit per verdict "
        "(evaluator_timeout)"
    )
    assert judged["c1"].value == 1.0
    assert result.provenance["timeout_s"] is None
    assert result.provenance["evaluator_timeout_s"] == 1


@pytest.mark.parametrize("bad", [0, -1, float("nan")])
def test_an_evaluator_timeout_that_is_not_a_positive_number_is_refused(bad):
    @evaluator(criterion="ok", reads=("output",))
    def ok(case):
        return True

    with pytest.raises(ConfigError, match="evaluator_timeout must be a positive number"):
        evaluate(echo, rows("a"), [ok], store=InMemoryStore(), evaluator_timeout=bad)


def test_a_run_whose_verdicts_are_all_cached_starts_no_evaluator_process():
    @evaluator(criterion="same", reads=("output", "expected"))
    def same(case):
        return case.output == case.expected["text"]

    store = InMemoryStore()
    first = evaluate(echo, rows("a", "b", "c"), [same], store=store)
    again = evaluate(echo, rows("a", "b", "c"), [same], store=store)

    assert first.provenance["evaluator_execution"]["evaluators"]["same"]["processes"] >= 1
    assert "evaluator_execution" not in again.provenance
    assert again.provenance["judging"]["same"] == {
        "judged": 0,
        "cached": 3,
        "failed": 0,
        "skipped": 0,
    }
    assert [case.verdicts["same"].value for case in again.cases] == [1.0, 1.0, 1.0]


def test_many_verdicts_in_batches_come_back_each_to_its_own_case_with_sub_scores_in_order(
    tmp_path,
):
    path = write_metric(
        tmp_path,
        """\
        def score(input, output, expected=None):
            n = int(output.split()[1])
            return n / 1000, {"feedback": output, "scores": {"zeta": 1.0, "alpha": n % 2}}
        """,
        name="numbered.py",
    )
    texts = [f"number {n}" for n in range(1000)]

    result = evaluate(echo, rows(*texts), [MetricFile(path)], store=InMemoryStore())

    for n, case in enumerate(result.cases):
        verdict = case.verdicts["numbered"]
        assert (verdict.value, verdict.feedback) == (n / 1000, f"number {n}")
        assert list(verdict.scores.items()) == [("zeta", 1.0), ("alpha", n % 2)]
    described = result.provenance["evaluator_execution"]["evaluators"]["numbered"]
    assert described["verdicts_per_message"] > 1


def test_an_evaluator_that_waits_judges_one_verdict_per_process_in_several_processes(
    monkeypatch,
):
    monkeypatch.setenv("OLOPROOF_JUDGE_CONCURRENCY", "3")

    @evaluator(criterion="waits", reads=("output",), io_bound=True)
    def waits(case):
        import time

        time.sleep(0.5)
        return True

    result = evaluate(echo, rows(*"abcdefghij"), [waits], store=InMemoryStore())

    assert result.metric("waits").n_observed == 10
    described = result.provenance["evaluator_execution"]["evaluators"]["waits"]
    assert described["verdicts_per_message"] == 1
    assert 1 < described["processes"] <= 3


def test_an_evaluator_that_cannot_travel_to_its_process_says_why_on_each_verdict():
    import threading

    guard = threading.Lock()

    @evaluator(criterion="guarded", reads=("output",))
    def guarded(case):
        with guard:
            return True

    result = evaluate(echo, rows("a", "b"), [guarded], store=InMemoryStore())

    for verdict in verdicts(result, "guarded").values():
        assert verdict.error.startswith(
            "IsolationError: the evaluator 'guarded' could not be sent to its process: "
            "TypeError: cannot pickle '_thread.lock' object"
        )
        assert "Create them inside the function" in verdict.error


def test_an_evaluator_in_this_process_is_bounded_after_the_fact_and_keeps_its_exit_to_itself():
    """`isolation="thread"` (trusted code): a late verdict is discarded, a SystemExit is
    the verdict's, and the run goes on."""

    @evaluator(criterion="late", reads=("output",))
    def late(case):
        import time

        if case.output == "bye":
            raise SystemExit(2)
        time.sleep(1.5 if case.output == "late" else 0)
        return True

    result = evaluate(
        echo,
        rows("late", "bye", "ok"),
        [late],
        store=InMemoryStore(),
        isolation="thread",
        evaluator_timeout=1,
    )

    judged = verdicts(result, "late")
    assert judged["c0"].error.startswith("TimeoutError: the evaluator took longer than its 1 s")
    assert judged["c1"].error.startswith("SystemExit: 2")
    assert judged["c2"].value == 1.0
    assert "evaluator_execution" not in result.provenance
