"""Reading a chat reply, whole or streamed, into text, tool calls and usage.

A reply whose message calls tools and says nothing is a good reply: its text is ""
and its tool calls are kept. A reply with neither is malformed.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from oloproof_core.models._settings import ModelError, ModelSettings


@dataclass(slots=True)
class Reading:
    """What a reply said and what the server reported it cost."""

    text: str
    tool_calls: tuple[dict[str, Any], ...]
    input_tokens: int
    output_tokens: int
    metered: bool


def read_completion(response: Any, settings: ModelSettings) -> Reading:
    try:
        message = response.choices[0].message
    except (AttributeError, IndexError, KeyError, TypeError):
        message = None
    text = getattr(message, "content", None)
    calls = tuple(_as_dict(call) for call in getattr(message, "tool_calls", None) or ())
    if not isinstance(text, str) and not calls:
        shown = repr(response)
        raise ModelError(
            f"malformed reply from {settings.model}: no message text in "
            f"{shown[:200]}{'…' if len(shown) > 200 else ''}"
        )
    return Reading(
        text if isinstance(text, str) else "", calls, *usage_of(getattr(response, "usage", None))
    )


def read_stream(chunks: Iterable[Any], settings: ModelSettings) -> Reading:
    """Join a stream's deltas (the first choice's) and keep its usage chunk."""
    parts: list[str] = []
    calls: dict[int, _ToolCall] = {}
    usage = None
    saw_choice = False
    for chunk in chunks:
        usage = getattr(chunk, "usage", None) or usage
        choices = getattr(chunk, "choices", None) or []
        delta = getattr(choices[0], "delta", None) if choices else None
        if delta is None:
            continue
        saw_choice = True
        if isinstance(delta.content, str):
            parts.append(delta.content)
        for piece in getattr(delta, "tool_calls", None) or ():
            calls.setdefault(piece.index, _ToolCall()).add(piece)
    if not saw_choice:
        raise ModelError(f"malformed reply from {settings.model}: the stream had no choices")
    tool_calls = tuple(calls[index].as_dict() for index in sorted(calls))
    return Reading("".join(parts), tool_calls, *usage_of(usage))


def usage_of(usage: Any) -> tuple[int, int, bool]:
    """Input and output tokens, and whether the server reported them at all."""
    prompt = getattr(usage, "prompt_tokens", None)
    completion = getattr(usage, "completion_tokens", None)
    if (
        not isinstance(prompt, int)
        or not isinstance(completion, int)
        or min(prompt, completion) < 0
    ):
        return 0, 0, False
    return prompt, completion, True


@dataclass(slots=True)
class _ToolCall:
    """One tool call assembled from its streamed pieces (id and name once, arguments in parts)."""

    id: str | None = None
    name: str = ""
    arguments: list[str] = field(default_factory=list)

    def add(self, piece: Any) -> None:
        self.id = getattr(piece, "id", None) or self.id
        function = getattr(piece, "function", None)
        if function is not None:
            self.name += getattr(function, "name", None) or ""
            self.arguments.append(getattr(function, "arguments", None) or "")

    def as_dict(self) -> dict[str, Any]:
        function = {"name": self.name, "arguments": "".join(self.arguments)}
        return {"id": self.id, "type": "function", "function": function}


def _as_dict(call: Any) -> dict[str, Any]:
    dump = getattr(call, "model_dump", None)
    value = dump(exclude_none=True) if callable(dump) else call
    return dict(value) if isinstance(value, dict) else {"value": value}
