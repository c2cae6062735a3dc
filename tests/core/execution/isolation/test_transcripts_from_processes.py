"""Transcripts of systems run in real child processes, their calls through the gateway to
the stand-in model server: every call in order, tool results, the system's own steps,
streams, caps and arguments that are not JSON, and a judge that reads it all."""

from __future__ import annotations

import pytest

from oloproof import evaluate
from oloproof.evaluators import StepCount, ToolSequence, ToolUsed, TrajectoryJudge
from oloproof_core import InMemoryStore
from oloproof_core.cases.transcript_caps import TEXT_CAP
from tests.core.execution.isolation import agent_systems as agents
from tests.support.agent_replies import agent_reply, is_judge
from tests.support.fake_openai import FakeOpenAI, Status

ROWS = [
    {"id": "tea", "input": {"question": "where is my tea"},
     "expected": {"tools": ["search", "lookup"]}},
    {"id": "garbled", "input": {"question": "a garbled one"}, "expected": {"tools": ["search"]}},
]  # fmt: skip
EVALUATORS = [
    ToolUsed(criterion="looked_up", tool="lookup"),
    ToolSequence(criterion="right_tools"),
    StepCount(criterion="few_calls", max_model_calls=3),
]


def _run(target, rows=ROWS, evaluators=EVALUATORS, **options):
    return evaluate(target, rows, evaluators, store=InMemoryStore(), record=False, **options)


def _kinds(trace) -> list[str]:
    return [step["kind"] for step in trace.steps]


@pytest.mark.parametrize("target", [agents.tool_agent, agents.streaming_agent])
def test_every_model_call_is_in_the_transcript_in_order(models_on: FakeOpenAI, target) -> None:
    models_on.respond_with(agent_reply)
    result = _run(target)
    calls_in_transcripts = 0
    for case in result.cases:
        assert case.error is None, case.error
        trace = case.trace
        calls_in_transcripts += len(trace.model_calls)
        assert _kinds(trace) == [
            "message", "message", "model_call", "tool_result", "model_call", "tool_result",
            "model_call",
        ]  # fmt: skip
        first, last = trace.model_calls[0], trace.model_calls[-1]
        assert first["tools_offered"] == ["search", "lookup"]
        assert first["tool_calls"][0]["name"] == "search"
        assert last["text"] == f"done: {case.input['question']}"
        assert (last["input_tokens"], last["output_tokens"]) == (20, 7)
        assert last["cost_usd"] == pytest.approx((20 * 1 + 7 * 2) / 1e6)
        assert all(step["latency_ms"] > 0 for step in trace.model_calls)
        assert [r["name"] for r in trace.tool_results] == ["search", "lookup"]
        assert trace.tool_results[1]["text"] == "lookup found 3 results for details"
        assert all(
            step["streamed"] is (target is agents.streaming_agent) for step in trace.model_calls
        )
    # Counted against the server's own count: no call missing, none twice.
    assert calls_in_transcripts == models_on.request_count == 6
    tea, _garbled = result.cases
    assert tea.verdicts["right_tools"].value == 1.0
    assert tea.verdicts["looked_up"].value == 1.0
    assert tea.verdicts["few_calls"].value == 1.0


def test_arguments_that_are_not_json_are_kept_as_given_and_flagged_in_that_case_only(
    models_on: FakeOpenAI,
) -> None:
    models_on.respond_with(agent_reply)
    tea, garbled = _run(agents.tool_agent).cases
    assert garbled.error is None
    (search,) = garbled.trace.model_calls[0]["tool_calls"]
    assert search["arguments"] == "{not json"
    assert search["arguments_not_json"] is True
    assert garbled.trace.flags == [
        "call 1: the arguments of tool call 'search' are not JSON; kept as the model gave them"
    ]
    assert garbled.trace.tool_results[0]["text"] == "error: the arguments were not JSON"
    assert tea.trace.flags == []


def test_the_systems_own_steps_sit_among_the_calls_marked_as_its_own(
    models_on: FakeOpenAI,
) -> None:
    models_on.respond_with(agent_reply)
    tea = _run(agents.agent_with_steps, rows=ROWS[:1]).cases[0]
    steps = tea.trace.steps
    assert [(s["kind"], s.get("name")) for s in steps if s["by"] == "system"] == [
        ("system_step", "planned"), ("system_step", "ran tool"),
        ("system_step", "ran tool"), ("system_step", "checked"),
    ]  # fmt: skip
    assert steps[0]["name"] == "planned"
    assert steps[-1]["name"] == "checked"
    # Each tool's step comes after the call that asked for it and before its result.
    order = [s.get("name") if s["by"] == "system" else s["kind"] for s in steps]
    assert order[order.index("ran tool") - 1] == "model_call"
    assert order[order.index("ran tool") + 1] == "tool_result"
    assert tea.verdicts["few_calls"].value == 1.0  # steps of its own are not model calls


def test_a_transcript_over_its_caps_is_cut_with_a_mark_and_the_case_goes_on(
    models_on: FakeOpenAI,
) -> None:
    rows = [{"id": "wordy", "input": {"steps": 600}}]
    (case,) = _run(agents.wordy_steps, rows=rows, evaluators=[StepCount(max_steps=1000)]).cases
    assert case.error is None
    assert case.output == {"answer": "done"}
    assert len(case.trace.steps) == 500
    first = case.trace.steps[0]
    assert first["data"].endswith("more characters]")
    assert first["data_cut"] > TEXT_CAP
    assert "101 system steps past the first 500 left out" in case.trace.cuts
    assert case.verdicts["step_count"].value == 1.0


def test_the_trajectory_judge_reads_the_transcript_under_the_judge_role(
    models_on: FakeOpenAI,
) -> None:
    models_on.respond_with(agent_reply)
    judge = TrajectoryJudge(criterion="sensible", rubric="Each tool call is needed.")
    tea = _run(agents.tool_agent, rows=ROWS[:1], evaluators=[judge]).cases[0]
    assert tea.verdicts["sensible"].value == 1.0, tea.verdicts["sensible"]
    (judged,) = [request for request in models_on.requests if is_judge(request)]
    assert "3. the model replied: '' asked for tools: search" in judged.user_text
    assert "4. tool result of search: search found 3 results" in judged.user_text
    roles = [call.role for call in tea.measurements.model_calls]
    assert roles.count("system") == 3
    assert roles.count("judge") == 1
    assert len(tea.trace.model_calls) == 3  # the judge's own call is not the agent's


def test_a_failed_call_is_in_the_transcript_with_why(models_on: FakeOpenAI) -> None:
    models_on.enqueue(Status(500))  # the SDK tries again on its own: two calls, both kept
    models_on.respond_with(agent_reply)
    tea = _run(agents.tool_agent, rows=ROWS[:1]).cases[0]
    assert tea.error is None
    failed, *answered = tea.trace.model_calls
    assert (failed["status"], failed["text"], failed["tool_calls"]) == (500, "", [])
    assert failed["error"].startswith("the provider answered 500")
    assert [call["status"] for call in answered] == [200, 200, 200]
    assert len(tea.trace.model_calls) == models_on.request_count == 4
