"""The simulated user of a scenario conversation, played by the `user` model role.

This process asks the user model for each of the user's messages, between the system's
turns, so its calls are never the system's: each is kept on the conversation's case
under the `user` role. The model sees the scenario as its instructions and the
conversation from the user's side (its own earlier messages as the assistant's, the
system's replies as the user's), and ends the conversation by answering `STOP_MARKER`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from oloproof_core.cases.observations import ModelCall

STOP_MARKER = "<END>"
"""A message of the simulated user's that holds this ends the conversation (the message is
not sent to the system)."""

INSTRUCTIONS = """\
You play a user who talks with an assistant. You are the user, never the assistant.

The scenario:
{scenario}

Write only the user's next message, as the user would type it, and nothing else.
When the conversation is over for the user (what they came for is done, or will not be \
done), reply with {stop} alone."""

OPENING = "(The conversation begins. Write the user's first message.)"


def user_model_messages(
    scenario: str, messages: Sequence[Mapping[str, str]]
) -> list[dict[str, str]]:
    """What the user model is sent: the scenario, then the conversation from the user's
    side, ending with the assistant's last reply (or the opening)."""
    prompt = [
        {"role": "system", "content": INSTRUCTIONS.format(scenario=scenario, stop=STOP_MARKER)},
        {"role": "user", "content": OPENING},
    ]
    swapped = {"user": "assistant", "assistant": "user"}
    prompt += [
        {"role": swapped[message["role"]], "content": message["content"]} for message in messages
    ]
    return prompt


def simulated_user_turn(
    scenario: str, messages: Sequence[Mapping[str, str]]
) -> tuple[str, ModelCall]:
    """The user model's next message, stripped (see `ends_conversation`), and the call it
    took. Raises `ModelError` when the user model cannot be called (none configured, the
    provider failing after retries, a reply without text).
    """
    # Here: a run without a scenario never loads the model client.
    from oloproof_core.models import SIMULATED_USER, chat

    reply = chat(user_model_messages(scenario, messages), role=SIMULATED_USER)
    call = ModelCall(
        role=SIMULATED_USER,
        model=reply.model,
        input_tokens=reply.input_tokens,
        output_tokens=reply.output_tokens,
        cost_usd=reply.cost_usd,
        latency_ms=reply.latency_ms,
    )
    return reply.text.strip(), call


def ends_conversation(text: str) -> bool:
    """Whether the simulated user's message ends the conversation."""
    return STOP_MARKER in text
