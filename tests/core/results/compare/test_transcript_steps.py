"""Where two transcripts of one case first differ: figures aside, step by step."""

from __future__ import annotations

from typing import Any

from oloproof_core.cases.transcript import Transcript
from oloproof_core.results.compare import difference_lines, first_difference, step_line


def _call(arguments: str, latency: float = 12.0) -> dict[str, Any]:
    return {
        "kind": "model_call", "by": "gateway", "call": 1, "role": "assistant", "text": "",
        "model": "m", "latency_ms": latency, "input_tokens": 10, "output_tokens": 5,
        "cost_usd": 1e-5, "tool_calls": [{"id": "c1", "name": "find", "arguments": arguments}],
    }  # fmt: skip


def _steps(arguments: str = '{"order": "A-1"}', latency: float = 12.0) -> list[dict[str, Any]]:
    return [
        {"kind": "system_step", "by": "system", "name": "policy", "data": {"x": 1}, "at": 1.0},
        {"kind": "message", "by": "gateway", "call": 1, "role": "user", "text": "where is A-1?"},
        _call(arguments, latency),
        {"kind": "tool_result", "by": "gateway", "call": 2, "role": "tool",
         "tool_call_id": "c1", "name": "find", "text": "shipped"},
    ]  # fmt: skip


def test_the_same_conversation_with_other_figures_does_not_differ() -> None:
    old = Transcript(steps=_steps(latency=12.0))
    new = {"steps": [{**step, "at": 99.0} for step in _steps(latency=800.0)]}
    assert first_difference(old, new) is None
    assert difference_lines("q1", None) == [
        "case q1: the transcripts say and do the same (figures aside)"
    ]


def test_other_tool_arguments_differ_at_their_step_with_both_steps() -> None:
    old, new = _steps(), _steps('{"order": "a-1"}', latency=3.0)
    found = first_difference({"steps": old}, Transcript(steps=new))
    assert found is not None
    assert (found.number, found.same_before, found.fields) == (3, 2, ("tool_calls",))
    assert (found.baseline, found.candidate) == (old[2], new[2])
    assert found.to_dict()["step"] == 3
    lines = difference_lines("q1", found)
    assert lines[0] == (
        "case q1: the transcripts first differ at step 3 of 4 (baseline) and 4 (candidate) "
        "(tool_calls differ); the 2 before it are the same"
    )
    assert lines[1] == '  baseline:  model call (assistant): calls find({"order": "A-1"})'
    assert lines[2] == '  candidate: model call (assistant): calls find({"order": "a-1"})'


def test_a_transcript_that_ends_first_differs_where_the_other_goes_on() -> None:
    longer = _steps()
    found = first_difference({"steps": longer[:2]}, {"steps": longer})
    assert found is not None
    assert (found.number, found.baseline, found.candidate, found.fields) == (
        3, None, longer[2], ()
    )  # fmt: skip
    assert step_line(found.baseline) == "(no such step: the transcript had ended)"
    missing = first_difference(None, Transcript(steps=longer))
    assert missing is not None
    assert (missing.number, missing.baseline_steps) == (1, 0)
    assert first_difference(None, None) is None


def test_a_step_in_a_line_names_what_it_did_and_is_shortened() -> None:
    steps = _steps()
    assert step_line(steps[0]) == 'system step: policy: {"x": 1}'
    assert step_line(steps[3]) == "tool result (find): shipped"
    long = {**steps[1], "text": "word " * 100}
    shown = step_line(long)
    assert shown.startswith("message (user): word word")
    assert shown.endswith("…")
    assert len(shown) == len("message (user): ") + 160 + 1
    other_kind = {**steps[1], "kind": "model_call", "role": "assistant", "text": "hi"}
    found = first_difference({"steps": [steps[1]]}, {"steps": [other_kind]})
    assert found is not None
    assert found.fields == ("kind", "role", "text")
