"""A case's transcript, put together in the parent from the gateway's record of its calls
and the steps the system reported itself.

The gateway's calls come in the order they reached it, each with the messages it added
to the case's conversation (a tool's result is a message the agent sends back) and its
reply; the system's own steps are placed among them by the time they were taken. Then
the caps hold (`transcript_caps`): what they cut is said, never a failure of the case.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from oloproof_core.cases.transcript import Transcript
from oloproof_core.cases.transcript_caps import capped_steps

if TYPE_CHECKING:
    from oloproof_core.execution.gateway import GatewayCall

_CALL_FIELDS = (
    "model",
    "endpoint",
    "streamed",
    "status",
    "latency_ms",
    "input_tokens",
    "output_tokens",
    "cost_usd",
)
"""What a model call's step takes from the gateway's record of it."""


def transcript_of(calls: Sequence[GatewayCall], own: Transcript | None) -> Transcript | None:
    """The case's transcript from its calls and its own steps (None when it has neither)."""
    said = [call for call in calls if call.exchange is not None]
    if not said and own is None:
        return None
    timed: list[tuple[float, int, list[dict[str, Any]]]] = []
    names: dict[str, str] = {}
    flags: list[str] = []
    ordered = sorted(said, key=lambda call: call.started_at)
    for number, call in enumerate(ordered, start=1):
        timed.append((call.started_at, len(timed), _call_steps(number, call, names, flags)))
    for step in [] if own is None else own.steps:
        at = step.get("at")
        when = at if isinstance(at, float) and math.isfinite(at) else math.inf
        timed.append((when, len(timed), [step]))
    steps = [step for _, _, group in sorted(timed, key=lambda item: item[:2]) for step in group]
    cuts = [*([] if own is None else own.cuts), *_text_cuts(steps)]
    return Transcript(steps=capped_steps(steps, cuts), cuts=cuts, flags=flags)


def _call_steps(
    number: int, call: GatewayCall, names: dict[str, str], flags: list[str]
) -> list[dict[str, Any]]:
    """The messages a call added (tool results among them), then the call and its reply."""
    exchange = call.exchange
    assert exchange is not None
    steps: list[dict[str, Any]] = []
    if exchange.left_out:
        steps.append(_left_out(number, exchange.left_out))
    for message in exchange.messages:
        steps.append(_message_step(number, message, names))
    reply = exchange.reply
    step: dict[str, Any] = {"kind": "model_call", "by": "gateway", "call": number}
    step.update({name: getattr(call, name) for name in _CALL_FIELDS})
    step["role"] = "assistant"
    step.update({key: value for key, value in reply.items() if key != "role"})
    step["tools_offered"] = list(exchange.tools)
    for tool_call in reply.get("tool_calls") or ():
        if tool_call.get("id"):
            names[tool_call["id"]] = tool_call.get("name") or ""
        if tool_call.get("arguments_not_json"):
            flags.append(
                f"call {number}: the arguments of tool call {tool_call.get('name')!r} are not "
                "JSON; kept as the model gave them"
            )
    steps.append(step)
    return steps


def _message_step(number: int, message: dict[str, Any], names: dict[str, str]) -> dict[str, Any]:
    if message.get("role") == "tool":
        step = {"kind": "tool_result", "by": "gateway", "call": number, **message}
        called = names.get(str(message.get("tool_call_id")))
        if called and "name" not in step:
            step["name"] = called
        return step
    return {"kind": "message", "by": "gateway", "call": number, **message}


def _left_out(number: int, count: int) -> dict[str, Any]:
    return {
        "kind": "message",
        "by": "gateway",
        "call": number,
        "role": "(left out)",
        "text": f"{count:,} earlier messages of this request were not kept (the cap on steps)",
    }


def _text_cuts(steps: list[dict[str, Any]]) -> list[str]:
    said = []
    for index, step in enumerate(steps, start=1):
        if step.get("by") == "system":  # its own cuts are said already
            continue
        for key, value in step.items():
            if key.endswith("_cut") and isinstance(value, int):
                said.append(f"step {index}: its {key[:-4]} was cut by {value:,} characters")
        for tool_call in step.get("tool_calls") or ():
            cut = tool_call.get("arguments_cut")
            if isinstance(cut, int):
                said.append(f"step {index}: a tool call's arguments were cut by {cut:,} characters")
    return said
