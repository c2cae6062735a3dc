"""The transcript's data: its caps and their marks, its digest, and the checks on what a
system's process sends."""

from __future__ import annotations

import pytest

from oloproof_core.cases.case import CaseResult
from oloproof_core.cases.context import current_case, enter_case, leave_case
from oloproof_core.cases.transcript import (
    EMPTY_DIGEST,
    Transcript,
    system_steps_from_child,
    transcript_digest,
)
from oloproof_core.cases.transcript_caps import (
    STEPS_CAP,
    TEXT_CAP,
    TOTAL_CAP_VARIABLE,
    capped_steps,
    clip_text,
)
from oloproof_core.errors import OloproofError


def _call(number: int, *, latency: float = 5.0, tool: str = "search") -> dict:
    return {
        "kind": "model_call",
        "by": "gateway",
        "call": number,
        "text": "",
        "latency_ms": latency,
        "input_tokens": 10,
        "output_tokens": 5,
        "cost_usd": 0.001 * latency,
        "tool_calls": [{"id": f"c{number}", "name": tool, "arguments": '{"q": "x"}'}],
    }


def test_a_text_over_the_cap_is_cut_with_a_mark_saying_how_much() -> None:
    text, cut = clip_text("a" * (TEXT_CAP + 1234))
    assert cut == 1234
    assert text == "a" * TEXT_CAP + "… [cut: 1,234 more characters]"
    assert clip_text("short") == ("short", 0)


def test_steps_past_the_count_cap_are_left_out_and_said() -> None:
    cuts: list[str] = []
    kept = capped_steps([{"kind": "message", "text": str(i)} for i in range(STEPS_CAP + 7)], cuts)
    assert len(kept) == STEPS_CAP
    assert cuts == [f"7 later steps left out: a transcript keeps at most {STEPS_CAP} steps"]


def test_steps_past_the_size_cap_are_left_out_and_said(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(TOTAL_CAP_VARIABLE, "3")  # 3,000 characters of JSON
    steps = [{"kind": "message", "text": "y" * 900} for _ in range(5)]
    cuts: list[str] = []
    kept = capped_steps(steps, cuts)
    assert len(kept) == 3
    assert cuts == [
        "steps 4 to 5 left out: the transcript reached its 3,000-character cap "
        "(OLOPROOF_TRANSCRIPT_KB sets it in thousands)"
    ]


def test_the_digest_covers_what_was_said_not_what_it_took_or_cost() -> None:
    fast = Transcript(steps=[_call(1, latency=2.0)])
    slow = Transcript(steps=[_call(1, latency=900.0)])
    other_tool = Transcript(steps=[_call(1, latency=2.0, tool="lookup")])
    assert fast.digest() == slow.digest()
    assert fast.digest() != other_tool.digest()
    assert transcript_digest(None) == transcript_digest(Transcript()) == EMPTY_DIGEST
    assert transcript_digest(fast) != EMPTY_DIGEST


def test_tool_calls_come_parsed_unless_their_arguments_are_not_json() -> None:
    step = _call(1)
    step["tool_calls"].append(
        {"id": "c2", "name": "lookup", "arguments": "{oops", "arguments_not_json": True}
    )
    transcript = Transcript(steps=[step])
    assert transcript.tool_names() == ["search", "lookup"]
    assert [call["arguments"] for call in transcript.tool_calls()] == [{"q": "x"}, "{oops"]


def test_a_systems_own_step_is_marked_and_its_large_data_cut() -> None:
    record = CaseResult(id="c1", input={}, expected=None)
    token = enter_case(record, "system")
    try:
        current_case().step("read a file", {"text": "z" * (TEXT_CAP * 2)})
        current_case().step("searched", {"hits": 3})
        with pytest.raises(OloproofError, match="is not JSON data"):
            current_case().step("bad", {"when": object()})
        with pytest.raises(OloproofError, match="name is a non-empty string"):
            current_case().step("", 1)
    finally:
        leave_case(token)
    assert record.trace is not None
    first, second = record.trace.system_steps
    assert first["by"] == second["by"] == "system"
    assert isinstance(first["data"], str)
    assert first["data"].endswith("more characters]")
    assert second["data"] == {"hits": 3}
    assert record.trace.cuts == [
        f"system step 'read a file': its data was cut by {first['data_cut']:,} characters"
    ]


def test_an_evaluator_cannot_add_steps() -> None:
    record = CaseResult(id="c1", input={}, expected=None)
    token = enter_case(record, "evaluator")
    try:
        with pytest.raises(OloproofError, match="reads the transcript"):
            current_case().step("judged", 1)
    finally:
        leave_case(token)


def test_what_a_systems_process_sends_is_checked_again() -> None:
    sent = [
        {"name": "ok", "data": {"a": 1}, "at": 5.0},
        {"name": 3, "data": "no name"},
        "not a step",
        {"name": "no time", "data": None, "at": float("nan")},
        {"name": "huge", "data": "w" * (TEXT_CAP + 10), "at": 6.0},
    ]
    transcript = system_steps_from_child({"steps": sent, "left_out": 4})
    assert transcript is not None
    assert [step["name"] for step in transcript.steps] == ["ok", "no time", "huge"]
    assert transcript.steps[0]["at"] == 5.0
    assert transcript.steps[2]["data_cut"] == 12  # counted in its JSON text, quotes included
    assert transcript.cuts[-1] == "4 system steps past the first 500 left out"
    assert system_steps_from_child("junk") is None
    assert system_steps_from_child({"steps": []}) is None


def test_a_transcript_travels_as_json_and_comes_back_the_same() -> None:
    transcript = Transcript(steps=[_call(1)], cuts=["one cut"], flags=["one flag"])
    again = Transcript.from_dict(transcript.to_dict())
    assert again == transcript
    assert again.digest() == transcript.digest()
    assert Transcript.from_dict("junk") == Transcript()
