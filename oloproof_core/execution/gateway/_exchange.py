"""What a call said: the request's messages and tools, and the reply's text and tool calls.

Read from the request the gateway forwards and the reply it relays (whole, or assembled
from a stream's events), each text clipped to the transcript's cap as it is read, so the
gateway keeps a bounded record per call. A tool call's arguments are kept as the model
gave them; arguments that are not JSON are flagged, never repaired.

Per case, only the messages a request adds to the conversation so far are kept
(`Conversations`): a tool-calling loop sends its whole history each time, and the
transcript records each message once, in the call that first carried it.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field, replace
from typing import Any

from oloproof_core._util.canonical import canonical_json, digest_text
from oloproof_core.cases.transcript_caps import STEPS_CAP, clip_text

Message = dict[str, Any]


@dataclass(frozen=True, slots=True)
class Exchange:
    """One call's request messages (each once per case), tools offered, and reply."""

    messages: tuple[Message, ...]
    tools: tuple[str, ...]
    reply: Message = field(default_factory=dict)
    signatures: tuple[str, ...] = ()
    left_out: int = 0
    """Messages of the request not read (past the cap on steps)."""

    def answered(self, reply: Message) -> Exchange:
        return replace(self, reply=reply)


def request_exchange(endpoint: str, body: dict[str, Any]) -> Exchange:
    """What a request sends: its messages (or prompt, or input) and the tools it offers."""
    if endpoint == "/chat/completions":
        raw = body.get("messages")
        raw = raw if isinstance(raw, list) else []
    else:
        prompt = body.get("prompt", body.get("input"))
        raw = [{"role": "user", "content": prompt if isinstance(prompt, str) else _json(prompt)}]
    left_out = max(0, len(raw) - STEPS_CAP)
    messages = tuple(_message(item) for item in raw[left_out:])
    return Exchange(
        messages=messages,
        tools=_tools(body),
        signatures=tuple(_signature(message) for message in messages),
        left_out=left_out,
    )


def reply_of(reply: Any) -> Message:
    """The first choice of a whole reply: its text and tool calls."""
    choices = reply.get("choices") if isinstance(reply, dict) else None
    first = choices[0] if isinstance(choices, list) and choices else None
    if not isinstance(first, dict):
        return {"role": "assistant", "text": "", "tool_calls": []}
    if isinstance(first.get("message"), dict):
        return _message({"role": "assistant", **first["message"]})
    return _message({"role": "assistant", "content": first.get("text")})


class ReplyAssembler:
    """A streamed reply put back together from its events' deltas (first choice only)."""

    def __init__(self) -> None:
        self._text: list[str] = []
        self._calls: dict[int, dict[str, Any]] = {}

    def feed(self, chunk: dict[str, Any]) -> None:
        choices = chunk.get("choices")
        if not isinstance(choices, list):
            return
        for choice in choices:
            if not isinstance(choice, dict) or choice.get("index", 0) != 0:
                continue
            delta = _mapping(choice.get("delta")) or choice
            if isinstance(delta.get("content"), str):
                self._text.append(delta["content"])
            elif isinstance(delta.get("text"), str):
                self._text.append(delta["text"])
            for part in delta.get("tool_calls") or ():
                if isinstance(part, dict):
                    self._call_part(part)

    def _call_part(self, part: dict[str, Any]) -> None:
        index = part.get("index")
        index = index if isinstance(index, int) else len(self._calls)
        call = self._calls.setdefault(index, {"id": None, "name": "", "arguments": ""})
        function = _mapping(part.get("function"))
        call["id"] = part.get("id") or call["id"]
        call["name"] += function.get("name") or ""
        call["arguments"] += function.get("arguments") or ""

    def reply(self) -> Message:
        calls = [
            {"id": call["id"], "type": "function", "function": call}
            for _, call in sorted(self._calls.items())
        ]
        return _message({"role": "assistant", "content": "".join(self._text), "tool_calls": calls})


class Conversations:
    """Each case's conversation so far, as signatures, to keep only what a request adds.

    A request's new messages are those after the longest run it shares with the last
    request of its case followed by that request's reply (the history an agent sends
    back); a request that rewrote its history has its messages kept again from there.
    """

    def __init__(self) -> None:
        self._so_far: dict[str, list[str]] = {}

    def added(self, case_id: str, exchange: Exchange) -> Exchange:
        before = self._so_far.get(case_id, [])
        shared = 0
        for mine, theirs in zip(exchange.signatures, before, strict=False):
            if mine != theirs:
                break
            shared += 1
        self._so_far[case_id] = [*exchange.signatures, _signature(exchange.reply)]
        return replace(exchange, messages=exchange.messages[shared:], signatures=())

    def forget(self, case_id: str | None) -> None:
        if case_id is not None:
            self._so_far.pop(case_id, None)


def _message(raw: Any) -> Message:
    if not isinstance(raw, dict):
        raw = {"role": "?", "content": _json(raw)}
    message: Message = {"role": str(raw.get("role") or "?")[:40]}
    _put_text(message, "text", _content_text(raw.get("content")))
    calls = raw.get("tool_calls")
    if isinstance(raw.get("function_call"), dict):  # the older single-function form
        calls = [{"id": None, "function": raw["function_call"]}]
    if isinstance(calls, list) and calls:
        message["tool_calls"] = [_tool_call(call) for call in calls]
    elif message["role"] == "assistant":
        message["tool_calls"] = []
    for key in ("tool_call_id", "name"):
        if isinstance(raw.get(key), str):
            message[key] = raw[key][:200]
    return message


def _tool_call(raw: Any) -> dict[str, Any]:
    raw = _mapping(raw)
    function = _mapping(raw.get("function"))
    arguments = function.get("arguments")
    text = arguments if isinstance(arguments, str) else _json(arguments)
    call: dict[str, Any] = {
        "id": raw.get("id") if isinstance(raw.get("id"), str) else None,
        "name": str(function.get("name") or "")[:200],
    }
    _put_text(call, "arguments", text)
    try:
        json.loads(text)
    except ValueError:
        call["arguments_not_json"] = True
    return call


def _put_text(target: Message, key: str, text: str) -> None:
    kept, cut = clip_text(text)
    target[key] = kept
    if cut:
        target[f"{key}_cut"] = cut


def _content_text(content: Any) -> str:
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):  # parts: text kept, others named
        texts = []
        for part in content:
            if isinstance(part, dict) and isinstance(part.get("text"), str):
                texts.append(part["text"])
            elif isinstance(part, dict):
                texts.append(f"[{part.get('type') or 'part'}]")
        return "\n".join(texts)
    return _json(content)


def _tools(body: dict[str, Any]) -> tuple[str, ...]:
    offered = body.get("tools") if isinstance(body.get("tools"), list) else body.get("functions")
    names = []
    for tool in offered if isinstance(offered, list) else ():
        if isinstance(tool, dict):
            function = _mapping(tool.get("function")) or tool
            names.append(str(function.get("name") or "?")[:200])
    return tuple(names[:STEPS_CAP])


def _mapping(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _signature(message: Message) -> str:
    return digest_text(canonical_json(message))[:32]


def _json(value: Any) -> str:
    try:
        return json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError):
        return repr(value)
