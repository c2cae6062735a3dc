"""Trajectory evaluators on transcripts: the tool sequence's match modes, tools used, step
counts, the judge's view of the transcript, and the verdict cache keyed on its digest."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from oloproof_core.cases.case import CaseResult
from oloproof_core.cases.transcript import Transcript
from oloproof_core.configs.evaluators import builtin_evaluator
from oloproof_core.errors import ConfigError, ContractError, DeclarationError
from oloproof_core.judging.evaluators import (
    CaseView,
    ExactMatch,
    StepCount,
    ToolSequence,
    ToolUsed,
    TrajectoryJudge,
)
from oloproof_core.judging.evaluators._tool_sequence import sequence_matches
from oloproof_core.results.store import verdict_key


def _trace(*tools: str, latency: float = 3.0, own_steps: int = 0) -> Transcript:
    steps: list[dict] = [{"kind": "message", "by": "gateway", "role": "user", "text": "q"}]
    for number, tool in enumerate(tools, start=1):
        call = {"id": f"c{number}", "name": tool, "arguments": "{}"}
        steps.append(
            {"kind": "model_call", "by": "gateway", "call": number, "text": "",
             "latency_ms": latency, "cost_usd": 0.01 * latency, "tool_calls": [call]}
        )  # fmt: skip
        steps.append({"kind": "tool_result", "role": "tool", "tool_call_id": f"c{number}"})
    steps.append({"kind": "model_call", "call": len(tools) + 1, "text": "done", "tool_calls": []})
    for number in range(own_steps):
        steps.append({"kind": "system_step", "by": "system", "name": f"own {number}", "data": 1})
    return Transcript(steps=steps)


def _case(trace: Transcript | None, tools: list[str] | None = None) -> CaseResult:
    expected = None if tools is None else {"tools": tools}
    return CaseResult(id="c", input={"q": 1}, expected=expected, output="done", trace=trace)


def _judge(evaluator, case: CaseResult):
    return evaluator.to_verdict(evaluator.judge(CaseView(case, evaluator.reads, "t")))


CALLED = ["search", "lookup", "search"]


@pytest.mark.parametrize(
    ("expected", "strict", "unordered", "subset", "superset"),
    [
        (["search", "lookup", "search"], True, True, True, True),
        (["lookup", "search", "search"], False, True, True, True),
        (["search", "lookup"], False, False, False, True),
        (["search", "lookup", "search", "answer"], False, False, True, False),
        (["lookup", "lookup"], False, False, False, False),
        ([], False, False, False, True),
    ],
)
def test_each_match_mode_of_the_tool_sequence(
    expected: list[str], strict: bool, unordered: bool, subset: bool, superset: bool
) -> None:
    modes = {"strict": strict, "unordered": unordered, "subset": subset, "superset": superset}
    for mode, wanted in modes.items():
        assert sequence_matches(CALLED, expected, mode) is wanted, (mode, expected)


def test_tool_sequence_judges_the_transcript_against_the_cases_expected_tools() -> None:
    strict = ToolSequence(criterion="seq")
    assert _judge(strict, _case(_trace("search", "lookup"), ["search", "lookup"])).value == 1.0
    missed = _judge(strict, _case(_trace("lookup", "search"), ["search", "lookup"]))
    assert missed.value == 0.0
    assert "['lookup', 'search'] do not match the expected ['search', 'lookup']" in str(
        missed.feedback
    )
    unordered = ToolSequence(criterion="seq", match="unordered")
    assert _judge(unordered, _case(_trace("lookup", "search"), ["search", "lookup"])).value == 1.0
    assert _judge(strict, _case(None, [])).value == 1.0  # no transcript: no tool was called


def test_tool_sequence_without_expected_tools_says_what_the_row_needs() -> None:
    with pytest.raises(ContractError, match=r'"expected": \{"tools": \["search", "lookup"\]\}'):
        _judge(ToolSequence(criterion="seq"), _case(_trace("search"), None))
    with pytest.raises(DeclarationError, match="match is one of strict, unordered"):
        ToolSequence(criterion="seq", match="fuzzy")


def test_tool_used_counts_the_calls_of_one_tool() -> None:
    assert _judge(ToolUsed(tool="lookup"), _case(_trace("search", "lookup"))).value == 1.0
    never = _judge(ToolUsed(tool="refund"), _case(_trace("search", "lookup")))
    assert never.value == 0.0
    assert never.feedback == (
        "'refund' was called 0 times (at least 1 wanted); the calls were: search, lookup."
    )
    twice = _case(_trace("search", "search"))
    assert _judge(ToolUsed(tool="search", max_times=1), twice).value == 0.0
    assert _judge(ToolUsed(tool="search", min_times=2, max_times=2), twice).value == 1.0


def test_step_count_bounds_calls_tool_calls_and_steps() -> None:
    case = _case(_trace("search", "lookup", own_steps=2))  # 3 model calls, 2 tool calls
    assert _judge(StepCount(max_model_calls=3, max_tool_calls=2), case).value == 1.0
    over = _judge(StepCount(max_model_calls=2, max_steps=100), case)
    assert over.value == 0.0
    assert over.feedback == "Too many: 3 model calls (at most 2 allowed)."
    with pytest.raises(DeclarationError, match="needs a bound"):
        StepCount()


def test_the_trajectory_judge_is_shown_every_step() -> None:
    judge = TrajectoryJudge(criterion="sensible", rubric="Each tool call is needed.")
    assert judge.reads == ("input", "output", "trace")
    case = _case(_trace("search", own_steps=1))
    prompt = judge.prompt(CaseView(case, judge.reads, "sensible"))
    assert "2. the model replied: '' asked for tools: search({})" in prompt
    assert "3. tool result of c1" in prompt
    assert "5. the system's own step 'own 0': 1" in prompt
    assert judge.describe()["kind"] == "TrajectoryJudge"


def test_the_verdict_cache_keys_on_the_transcripts_digest() -> None:
    sequence = ToolSequence(criterion="seq")
    key = verdict_key(sequence, _case(_trace("search", latency=2.0), ["search"]))
    # The same conversation, slower and dearer: the same key, so the cached verdict holds.
    assert verdict_key(sequence, _case(_trace("search", latency=900.0), ["search"])) == key
    # Another tool called: a new key, so the case is judged again.
    assert verdict_key(sequence, _case(_trace("lookup"), ["search"])) != key
    # An evaluator that does not read the trace keeps its key whatever the transcript.
    exact = ExactMatch(criterion="exact")
    assert verdict_key(exact, _case(_trace("search"))) == verdict_key(exact, _case(None))


def test_a_config_names_them_with_clear_errors() -> None:
    made = builtin_evaluator("oloproof.yaml:4: evaluators[0]", "ToolUsed", {"tool": "search"})
    assert isinstance(made, ToolUsed)
    with pytest.raises(ConfigError, match=r"oloproof.yaml:4: evaluators\[0\]: ToolSequence has no"):
        builtin_evaluator("oloproof.yaml:4: evaluators[0]", "ToolSequence", {"mode": "strict"})
    with pytest.raises(ConfigError, match="ToolUsed needs the parameter 'tool'"):
        builtin_evaluator("oloproof.yaml:4: evaluators[0]", "ToolUsed", {})


def test_the_docs_own_evaluator_of_the_transcript_judges_as_written() -> None:
    text = (Path(__file__).resolve().parents[3] / "docs" / "agents.md").read_text()
    section = text.split("\n## Evaluators that read the transcript\n", 1)[1]
    namespace: dict = {}
    exec(re.findall(r"```python\n(.*?)```", section, flags=re.S)[0], namespace)
    written = namespace["no_refund_twice"]
    assert written.reads == ("trace",)
    assert _judge(written, _case(_trace("find_order", "refund"))).value == 1.0
    assert _judge(written, _case(_trace("refund", "refund"))).value == 0.0
