"""Running conversation cases: the system called once per turn, with the history so far.

Conversations advance in rounds. Each round, every simulated user still talking is asked
for its next message (in this process, under the `user` model role, several at once),
then the next turn of every conversation still going runs as one batch of cases through
`run_turns` — the same path single cases take: the system's processes, the parent's
clock, the gateway's meter. A turn the system fails, a reply that is not text, or a
simulated user that cannot be reached ends its own conversation as a missing case and
no other. When every conversation is over, each case is given its whole (`turns`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from oloproof_core.cases.case import CaseError, CaseResult
from oloproof_core.cases.observations import ModelCall
from oloproof_core.datasets.conversations import ConversationPlan, conversation_of
from oloproof_core.errors import OloproofError
from oloproof_core.execution.running import ProgressCallback, keep_output
from oloproof_core.execution.simulated_user import ends_conversation, simulated_user_turn
from oloproof_core.execution.turns import (
    REPLIES,
    TURNS_ARTIFACT,
    joined_transcript,
    reply_text,
    summed_latency,
    turn_case,
    turn_error,
    turn_figures,
)

TurnRunner = Callable[[list[CaseResult]], None]
"""Runs a batch of turn cases as cases: fills each one's output (or error) and figures."""


@dataclass(slots=True)
class _Conversation:
    """One conversation case while it runs."""

    case: CaseResult
    plan: ConversationPlan
    messages: list[dict[str, str]] = field(default_factory=list)
    turns: list[CaseResult] = field(default_factory=list)
    replies: list[Any] = field(default_factory=list)
    user_calls: list[ModelCall] = field(default_factory=list)
    user_message: str | None = None
    error: CaseError | None = None
    stopped: bool = False

    @property
    def over(self) -> bool:
        return self.error is not None or self.stopped or len(self.turns) >= self.plan.max_turns

    def next_message(self) -> str:
        if self.plan.scenario is None:
            return self.plan.scripted[len(self.turns)]
        assert self.user_message is not None
        return self.user_message


def run_conversations(
    cases: Sequence[CaseResult],
    run_turns: TurnRunner,
    *,
    concurrency: int,
    progress: ProgressCallback | None = None,
) -> None:
    """Run every conversation case turn by turn; fill each one's output (or error) and
    figures, in place."""
    conversations = []
    for case in cases:
        plan = conversation_of(case.input, case.expected)
        if plan is None:
            raise ValueError(f"case {case.id!r} is not a conversation")
        conversations.append(_Conversation(case, plan))
    while going := [talk for talk in conversations if not talk.over]:
        _ask_simulated_users(going, concurrency)
        ready = [talk for talk in going if not talk.over]
        turns = []
        for talk in ready:
            talk.messages.append({"role": "user", "content": talk.next_message()})
            turns.append(turn_case(talk.case, talk.plan.context, talk.messages))
        if turns:
            run_turns(turns)
        for talk, turn in zip(ready, turns, strict=True):
            _take_turn(talk, turn)
        if progress is not None:
            progress("system", sum(talk.over for talk in conversations), len(conversations))
    for talk in conversations:
        _conclude(talk)


def _ask_simulated_users(going: Sequence[_Conversation], concurrency: int) -> None:
    asking = [talk for talk in going if talk.plan.scenario is not None]
    if not asking:
        return
    # Worker threads carry no case: the user model's calls are kept by `_ask` alone.
    workers = max(1, min(concurrency, len(asking)))
    with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="oloproof-user") as pool:
        list(pool.map(_ask, asking))


def _ask(talk: _Conversation) -> None:
    number = len(talk.turns) + 1
    assert talk.plan.scenario is not None
    try:
        text, call = simulated_user_turn(talk.plan.scenario, talk.messages)
    except Exception as exc:  # the user model failing ends this conversation alone
        reason = str(exc) if isinstance(exc, OloproofError) else f"{type(exc).__name__}: {exc}"
        talk.error = CaseError(
            "SimulatedUserError",
            f"the simulated user (model role 'user') could not write message {number}: {reason}",
        )
        return
    talk.user_calls.append(call)
    if not text:
        talk.error = CaseError(
            "SimulatedUserError", f"the simulated user's message {number} was blank"
        )
    elif ends_conversation(text):
        talk.stopped = True
        if not talk.turns:
            talk.error = CaseError(
                "SimulatedUserError",
                "the simulated user ended the conversation before its first message",
            )
    else:
        talk.user_message = text


def _take_turn(talk: _Conversation, turn: CaseResult) -> None:
    talk.turns.append(turn)
    number = len(talk.turns)
    if turn.error is not None:
        talk.error = turn_error(number, turn.error)
        return
    try:
        text = reply_text(turn.output)
    except OloproofError as exc:
        talk.error = turn_error(number, CaseError(type(exc).__name__, str(exc)))
        return
    talk.replies.append(turn.output)
    talk.messages.append({"role": "assistant", "content": text})


def _conclude(talk: _Conversation) -> None:
    """The conversation's case: the whole conversation as its output, its turns' figures."""
    case = talk.case
    measurements = case.measurements
    measurements.latency_ms = summed_latency(talk.turns)
    measurements.protected = all(turn.measurements.protected for turn in talk.turns)
    for turn in talk.turns:
        measurements.model_calls.extend(turn.measurements.model_calls)
    measurements.model_calls.extend(talk.user_calls)
    case.artifacts = {TURNS_ARTIFACT: [turn_figures(turn) for turn in talk.turns]}
    case.trace = joined_transcript(talk.turns)
    if talk.error is not None:
        case.output, case.output_json, case.error = None, None, talk.error
        return
    keep_output(case, {"messages": talk.messages, REPLIES: talk.replies})
