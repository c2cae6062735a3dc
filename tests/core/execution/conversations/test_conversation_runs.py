"""Conversation cases run turn by turn: the system called once per turn in its own process
with the history so far, each turn timed and metered as a case, a simulated user played by
the `user` model role, and a failure anywhere ending only its own conversation."""

from __future__ import annotations

import pytest

from oloproof import evaluate
from oloproof.evaluators import Contains
from oloproof.models import configure
from oloproof_core import InMemoryStore
from oloproof_core.execution.simulated_user import OPENING, STOP_MARKER, user_model_messages
from tests.core.execution.conversations import talking_systems as systems
from tests.support.fake_openai import FakeOpenAI, Reply, Request, Status

SAID = Contains(criterion="said", value="messages")


def user(text: str) -> dict:
    return {"role": "user", "content": text}


def run(target, rows, evaluators=(SAID,), **options):
    return evaluate(target, rows, list(evaluators), store=InMemoryStore(), record=False, **options)


@pytest.mark.parametrize("isolation", ["process", "thread"])
def test_each_turn_gets_the_history_and_the_output_is_the_whole_conversation(isolation):
    rows = [
        {"id": "warm", "input": {"turns": [user("Hi"), user("Refund?"), user("Thanks")],
                                 "tone": "warm"}},
        {"id": "short", "input": {"turns": [user("Hello")]}},
    ]  # fmt: skip
    result = run(systems.counter, rows, isolation=isolation)

    warm = next(case for case in result.cases if case.id == "warm")
    assert warm.error is None, warm.error
    assert [m["role"] for m in warm.output["messages"]] == ["user", "assistant"] * 3
    assert [m["content"] for m in warm.output["messages"][::2]] == ["Hi", "Refund?", "Thanks"]
    contents = [reply["content"] for reply in warm.output["replies"]]
    assert contents == ["1 messages, last: Hi", "3 messages, last: Refund?",
                        "5 messages, last: Thanks"]  # fmt: skip
    assert [m["content"] for m in warm.output["messages"][1::2]] == contents
    assert {reply["tone"] for reply in warm.output["replies"]} == {"warm"}
    turns = warm.artifacts["turns"]
    assert [turn["artifacts"] for turn in turns] == [{"seen": 1}, {"seen": 3}, {"seen": 5}]
    assert all(turn["latency_ms"] > 0 for turn in turns)
    assert warm.latency_ms == pytest.approx(sum(turn["latency_ms"] for turn in turns))
    assert warm.measurements.protected is (isolation == "process")
    assert warm.verdicts["said"].passed
    short = next(case for case in result.cases if case.id == "short")
    assert short.output["replies"][0]["content"] == "1 messages, last: Hello"
    if isolation == "process":  # the sandbox's own PID namespace: a small pid, not ours
        assert all(reply["pid"] < 100 for reply in warm.output["replies"])


def test_a_failing_turn_fails_only_its_own_conversation():
    rows = [
        {"id": "crash", "input": {"turns": [user("Hi"), user("please crash"), user("more")]}},
        {"id": "number", "input": {"turns": [user("a number")]}},
        {"id": "fine", "input": {"turns": [user("Hi"), user("Bye")]}},
    ]
    result = run(systems.counter, rows)

    crash, number, fine = result.cases
    assert crash.error is not None
    assert crash.output is None
    assert (crash.error.type, crash.error.message) == ("RuntimeError", "turn 2: asked to crash")
    assert "asked to crash" in crash.error.traceback
    assert len(crash.artifacts["turns"]) == 2  # the third turn never ran
    assert number.error is not None
    assert number.error.type == "ContractError"
    assert number.error.message.startswith(
        "turn 1: in a conversation the system returns its reply as a string, or as an object "
        "whose 'content' is the reply's text"
    )
    assert "it returned int 42" in number.error.message
    assert fine.error is None
    assert len(fine.output["replies"]) == 2
    assert result.metric("said").n_observed == 1


def stand_in(request: Request) -> Reply | Status:
    """The user model plays each scenario; the bot answers each user message."""
    if "You play a user" in request.system_text:
        if "unlucky" in request.system_text:
            return Status(400)
        said = sum(message["role"] == "assistant" for message in request.messages)
        if "two messages" in request.system_text and said == 2:
            return Reply(f"Thanks, that is all. {STOP_MARKER}", prompt_tokens=40)
        return Reply(f"user message {said + 1}", prompt_tokens=40)
    last = request.messages[-1]["content"]
    return Reply(f"bot answers: {last}")


def test_a_simulated_user_talks_until_it_stops_or_runs_out_of_turns(models_on: FakeOpenAI):
    configure("user", model="user-model", price_in=100, price_out=100)
    models_on.respond_with(stand_in)
    rows = [
        {"id": "stops", "input": {"scenario": "You stop after two messages.", "max_turns": 5}},
        {"id": "capped", "input": {"scenario": "You never stop.", "max_turns": 3}},
        {"id": "unlucky", "input": {"scenario": "You are unlucky."}},
    ]
    result = run(systems.model_bot, rows, [Contains(criterion="answered", value="bot answers")])

    stops, capped, unlucky = result.cases
    assert stops.error is None, stops.error
    assert stops.output["messages"] == [
        user("user message 1"), {"role": "assistant", "content": "bot answers: user message 1"},
        user("user message 2"), {"role": "assistant", "content": "bot answers: user message 2"},
    ]  # fmt: skip
    assert stops.output["replies"] == ["bot answers: user message 1", "bot answers: user message 2"]
    assert len(capped.output["replies"]) == 3

    def calls(case, role):
        return [call for call in case.measurements.model_calls if call.role == role]

    # The user model was asked once more than the bot by the one that stopped, and not
    # after the last turn by the one that ran out of turns.
    assert (len(calls(stops, "user")), len(calls(stops, "system"))) == (3, 2)
    assert (len(calls(capped, "user")), len(calls(capped, "system"))) == (3, 3)
    assert {call.model for call in calls(capped, "user")} == {"user-model"}
    # The system pays for its own calls only: (10 in, 5 out) at $1 and $2 per million.
    assert capped.cost_usd == pytest.approx(3 * (10 * 1 + 5 * 2) / 1e6)
    assert calls(capped, "user")[0].cost_usd == pytest.approx((40 + 5) * 100 / 1e6)
    assert result.usage()["user"].calls == 6
    assert unlucky.error is not None
    assert unlucky.error.type == "SimulatedUserError"
    assert unlucky.error.message.startswith(
        "the simulated user (model role 'user') could not write message 1: model call to user-model"
    )
    assert result.metric("answered").n_observed == 2

    asked = [r for r in models_on.requests if "You stop after two" in r.system_text]
    assert asked[0].messages[1:] == [user(OPENING)]
    assert asked[1].messages[2:] == [
        {"role": "assistant", "content": "user message 1"},
        user("bot answers: user message 1"),
    ]


def test_without_a_user_model_a_scenario_says_which_setting_to_give(monkeypatch):
    from oloproof_core.models import reset_configuration

    for name in ("OLOPROOF_DEFAULT_MODEL", "OLOPROOF_USER_MODEL"):
        monkeypatch.delenv(name, raising=False)
    reset_configuration()
    rows = [
        {"id": "talk", "input": {"scenario": "You want a refund."}},
        {"id": "scripted", "input": {"turns": [user("Hi")]}},
    ]
    result = run(systems.counter, rows)

    talk, scripted = result.cases
    assert talk.error is not None
    assert "no model is configured for the user role: set OLOPROOF_USER_MODEL" in (
        talk.error.message
    )
    assert scripted.error is None


def test_the_user_model_sees_the_conversation_from_the_users_side():
    prompt = user_model_messages(
        "You want a refund.",
        [user("Refund please"), {"role": "assistant", "content": "Which order?"}],
    )

    assert prompt[0]["role"] == "system"
    assert "You want a refund." in prompt[0]["content"]
    assert STOP_MARKER in prompt[0]["content"]
    assert prompt[1:] == [
        user(OPENING),
        {"role": "assistant", "content": "Refund please"},
        user("Which order?"),
    ]
