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
    """A whole reply, as the JSON the server sent."""
    choices = _get(response, "choices")
    message = _get(choices[0], "message") if isinstance(choices, list) and choices else None
    text = _get(message, "content")
    calls = tuple(_as_dict(call) for call in _get(message, "tool_calls") or ())
    if not isinstance(text, str) and not calls:
        shown = repr(response)
        raise ModelError(
            f"malformed reply from {settings.model}: no message text in "
            f"{shown[:200]}{'…' if len(shown) > 200 else ''}"
        )
    return Reading(text if isinstance(text, str) else "", calls, *usage_of(_get(response, "usage")))


def read_stream(chunks: Iterable[Any], settings: ModelSettings) -> Reading:
    """Join a stream's deltas (the first choice's) and keep its usage chunk."""
    parts: list[str] = []
    calls: dict[int, _ToolCall] = {}
    usage = None
    saw_choice = False
    for chunk in chunks:
        usage = _get(chunk, "usage") or usage
        choices = _get(chunk, "choices") or []
        delta = _get(choices[0], "delta") if isinstance(choices, list) and choices else None
        if not isinstance(delta, dict):
            continue
        saw_choice = True
        if isinstance(delta.get("content"), str):
            parts.append(delta["content"])
        for piece in delta.get("tool_calls") or ():
            if isinstance(piece, dict):
                calls.setdefault(_index(piece), _ToolCall()).add(piece)
    if not saw_choice:
        raise ModelError(f"malformed reply from {settings.model}: the stream had no choices")
    tool_calls = tuple(calls[index].as_dict() for index in sorted(calls))
    return Reading("".join(parts), tool_calls, *usage_of(usage))


def usage_of(usage: Any) -> tuple[int, int, bool]:
    """Input and output tokens, and whether the server reported them at all."""
    prompt = _get(usage, "prompt_tokens")
    completion = _get(usage, "completion_tokens")
    if (
        not isinstance(prompt, int)
        or not isinstance(completion, int)
        or isinstance(prompt, bool)
        or isinstance(completion, bool)
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

    def add(self, piece: dict[str, Any]) -> None:
        self.id = piece.get("id") or self.id
        function = piece.get("function")
        if isinstance(function, dict):
            self.name += function.get("name") or ""
            self.arguments.append(function.get("arguments") or "")

    def as_dict(self) -> dict[str, Any]:
        function = {"name": self.name, "arguments": "".join(self.arguments)}
        return {"id": self.id, "type": "function", "function": function}


def _get(value: Any, key: str) -> Any:
    return value.get(key) if isinstance(value, dict) else None


def _index(piece: dict[str, Any]) -> int:
    index = piece.get("index")
    return index if isinstance(index, int) else 0


def _as_dict(call: Any) -> dict[str, Any]:
    """A tool call as sent, its empty fields dropped as the SDK's reading dropped them."""
    if not isinstance(call, dict):
        return {"value": call}
    return {key: value for key, value in call.items() if value is not None}
