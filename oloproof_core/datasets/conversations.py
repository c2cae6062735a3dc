"""Conversation rows: a case whose input is a conversation rather than one question.

A row is a conversation when its input holds `turns` (the user's messages, in order,
each `{"role": "user", "content": "..."}`) or `scenario` (what a simulated user wants,
played by the `user` model role for at most `max_turns` turns). The system answers each
user message in turn; the row's other input keys go with every turn. An `expected`
object may hold `turns`, one expected object (or null) per scripted user message, for
evaluators that judge turn by turn.

The shape is checked as the row is loaded (`conversation_problem`), so a malformed
conversation stops the load with the file, the line and the form that works; every
later stage reads a checked row through `conversation_of`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

TURNS = "turns"
SCENARIO = "scenario"
MAX_TURNS = "max_turns"
MESSAGES = "messages"
"""What the system receives each turn: the conversation so far, ending with the user's message."""
CONVERSATION_KEYS = frozenset({TURNS, SCENARIO, MAX_TURNS})
DEFAULT_MAX_TURNS = 5
MOST_TURNS = 50
"""The most turns a conversation may have, scripted or simulated."""

_TURN_EXAMPLE = '[{"role": "user", "content": "Hello"}, {"role": "user", "content": "Thanks"}]'


@dataclass(frozen=True, slots=True)
class ConversationPlan:
    """A checked conversation row: what the user says (or plays) and what goes with it."""

    scripted: tuple[str, ...]
    """The user's messages in order; empty for a scenario."""
    scenario: str | None
    max_turns: int
    context: dict[str, Any]
    """The row's other input keys, given to the system with every turn."""
    expected_turns: tuple[Any, ...] | None
    """`expected["turns"]`: one expected object (or None) per scripted message, if given."""


def is_conversation(case_input: Any) -> bool:
    """Whether a (checked) row's input is a conversation."""
    return isinstance(case_input, Mapping) and (TURNS in case_input or SCENARIO in case_input)


def conversation_of(case_input: Any, expected: Any = None) -> ConversationPlan | None:
    """The conversation of a checked row's input (None when the row is a single case)."""
    if not is_conversation(case_input):
        return None
    context = {key: value for key, value in case_input.items() if key not in CONVERSATION_KEYS}
    scenario = case_input.get(SCENARIO)
    if scenario is not None:
        max_turns = case_input.get(MAX_TURNS, DEFAULT_MAX_TURNS)
        return ConversationPlan((), str(scenario), int(max_turns), context, None)
    scripted = tuple(str(turn["content"]) for turn in case_input[TURNS])
    wanted = expected.get(TURNS) if isinstance(expected, Mapping) else None
    expected_turns = tuple(wanted) if isinstance(wanted, list) else None
    return ConversationPlan(scripted, None, len(scripted), context, expected_turns)


def conversation_problem(case_input: Mapping[str, Any], expected: Any) -> str | None:
    """What is wrong with a conversation row, and the form that works; None when it is
    fine or the row is not a conversation."""
    if not is_conversation(case_input):
        if MAX_TURNS in case_input:
            return (
                f"'input.{MAX_TURNS}' belongs to a simulated user's conversation: give the "
                f'scenario too, e.g. {{"{SCENARIO}": "You want a refund for order 7", '
                f'"{MAX_TURNS}": 5}}'
            )
        return None
    if MESSAGES in case_input:
        return (
            f"'input.{MESSAGES}' is what the system receives each turn (the conversation so "
            f"far); a conversation's input gives the user's side as '{TURNS}' or "
            f"'{SCENARIO}': rename it"
        )
    if TURNS in case_input and SCENARIO in case_input:
        return (
            f"the input holds both '{TURNS}' (scripted user messages) and '{SCENARIO}' (a "
            "simulated user): keep one"
        )
    if SCENARIO in case_input:
        return _scenario_problem(case_input, expected)
    return _turns_problem(case_input[TURNS], expected)


def _scenario_problem(case_input: Mapping[str, Any], expected: Any) -> str | None:
    scenario = case_input[SCENARIO]
    if not isinstance(scenario, str) or not scenario.strip():
        return (
            f"'input.{SCENARIO}' must be a non-empty string telling the simulated user who "
            f'they are and what they want, e.g. "You ordered a lamp that arrived broken and '
            f'want a refund", found {_shown(scenario)}'
        )
    if MAX_TURNS in case_input:
        max_turns = case_input[MAX_TURNS]
        whole = isinstance(max_turns, int) and not isinstance(max_turns, bool)
        if not whole or not 1 <= max_turns <= MOST_TURNS:
            return (
                f"'input.{MAX_TURNS}' must be a whole number from 1 to {MOST_TURNS} (the most "
                f"turns the simulated user may take), found {_shown(max_turns)}"
            )
    if isinstance(expected, Mapping) and TURNS in expected:
        return (
            f"'expected.{TURNS}' gives one expected object per scripted user message, but a "
            "simulated user's turns are not known in advance: judge its conversation as a "
            "whole, or script its turns"
        )
    return None


def _turns_problem(turns: Any, expected: Any) -> str | None:
    if not isinstance(turns, list):
        return (
            f"'input.{TURNS}' must be a list of the user's messages, e.g. {_TURN_EXAMPLE}, "
            f"found {_shown(turns)}"
        )
    if not turns:
        return f"'input.{TURNS}' is empty: a conversation needs at least one user message"
    if len(turns) > MOST_TURNS:
        return (
            f"'input.{TURNS}' holds {len(turns)} messages; a conversation has at most {MOST_TURNS}"
        )
    for index, turn in enumerate(turns):
        problem = _turn_problem(index, turn)
        if problem:
            return problem
    return _expected_turns_problem(len(turns), expected)


def _turn_problem(index: int, turn: Any) -> str | None:
    where = f"'input.{TURNS}[{index}]'"
    if not isinstance(turn, Mapping) or set(turn) != {"role", "content"}:
        return (
            f'{where} must be an object with exactly "role" and "content", e.g. '
            f'{{"role": "user", "content": "Hello"}}, found {_shown(turn)}'
        )
    if turn["role"] != "user":
        return (
            f"{where} has the role {turn['role']!r}; '{TURNS}' lists the user's messages "
            '(role "user"): the system writes the assistant\'s replies, one per user message'
        )
    if not isinstance(turn["content"], str) or not turn["content"].strip():
        return f"{where}: 'content' must be the user's message as a non-empty string"
    return None


def _expected_turns_problem(count: int, expected: Any) -> str | None:
    if not isinstance(expected, Mapping) or TURNS not in expected:
        return None
    wanted = expected[TURNS]
    if not isinstance(wanted, list) or len(wanted) != count:
        return (
            f"'expected.{TURNS}' must be a list of {count} items, one expected object (or "
            f"null) per user message in 'input.{TURNS}', found {_shown(wanted)}"
        )
    for index, item in enumerate(wanted):
        if item is not None and not isinstance(item, Mapping):
            return (
                f"'expected.{TURNS}[{index}]' must be an object (or null), e.g. "
                f'{{"label": "refund"}}, found {_shown(item)}'
            )
    return None


def _shown(value: Any) -> str:
    text = repr(value)
    return f"{type(value).__name__} {text[:60]}{'…' if len(text) > 60 else ''}"
