"""What the gateway reads of a call for the transcript: requests, whole and streamed
replies, and only the messages a request adds to its case's conversation."""

from __future__ import annotations

import json

from oloproof_core.cases.transcript_caps import TEXT_CAP
from oloproof_core.execution.gateway._exchange import (
    Conversations,
    ReplyAssembler,
    reply_of,
    request_exchange,
)

TOOLS = [{"type": "function", "function": {"name": "search", "parameters": {}}}]


def _tool_call(call_id: str, name: str, arguments: str) -> dict:
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}


def test_a_request_gives_its_messages_and_the_tools_it_offers() -> None:
    exchange = request_exchange(
        "/chat/completions",
        {
            "messages": [
                {"role": "system", "content": "be brief"},
                {
                    "role": "user",
                    "content": [{"type": "text", "text": "hi"}, {"type": "image_url"}],
                },
            ],
            "tools": TOOLS,
        },
    )
    assert exchange.tools == ("search",)
    assert exchange.messages == (
        {"role": "system", "text": "be brief"},
        {"role": "user", "text": "hi\n[image_url]"},
    )


def test_a_whole_reply_gives_its_text_and_tool_calls_flagging_arguments_not_json() -> None:
    reply = reply_of(
        {
            "choices": [
                {
                    "message": {
                        "role": "assistant",
                        "content": None,
                        "tool_calls": [
                            _tool_call("a", "search", '{"q": 1}'),
                            _tool_call("b", "lookup", "{not json"),
                        ],
                    }
                }
            ]
        }
    )
    assert reply == {
        "role": "assistant",
        "text": "",
        "tool_calls": [
            {"id": "a", "name": "search", "arguments": '{"q": 1}'},
            {"id": "b", "name": "lookup", "arguments": "{not json", "arguments_not_json": True},
        ],
    }


def test_a_streamed_reply_is_put_together_from_its_deltas() -> None:
    assembler = ReplyAssembler()
    chunks = [
        {"choices": [{"index": 0, "delta": {"role": "assistant", "content": "Let"}}]},
        {"choices": [{"index": 0, "delta": {"content": " me look"}}]},
        {"choices": [{"index": 0, "delta": {"tool_calls": [
            {"index": 0, "id": "x", "function": {"name": "sea", "arguments": '{"q"'}}]}}]},
        {"choices": [{"index": 0, "delta": {"tool_calls": [
            {"index": 0, "function": {"name": "rch", "arguments": ': "tea"}'}}]}}]},
        {"choices": [], "usage": {"prompt_tokens": 1, "completion_tokens": 1}},
    ]  # fmt: skip
    for chunk in chunks:
        assembler.feed(chunk)
    assert assembler.reply() == {
        "role": "assistant",
        "text": "Let me look",
        "tool_calls": [{"id": "x", "name": "search", "arguments": '{"q": "tea"}'}],
    }


def test_long_texts_are_clipped_as_they_are_read() -> None:
    exchange = request_exchange(
        "/chat/completions", {"messages": [{"role": "user", "content": "q" * (TEXT_CAP + 5)}]}
    )
    (message,) = exchange.messages
    assert message["text_cut"] == 5
    assert message["text"].endswith("… [cut: 5 more characters]")


def test_each_message_is_kept_once_in_the_call_that_first_carried_it() -> None:
    conversations = Conversations()
    history = [{"role": "system", "content": "s"}, {"role": "user", "content": "u"}]
    first = request_exchange("/chat/completions", {"messages": history})
    answer = _tool_call("c1", "search", json.dumps({"q": "u"}))
    first = first.answered(reply_of({"choices": [{"message": {"tool_calls": [answer]}}]}))
    kept = conversations.added("case-1", first)
    assert [m["role"] for m in kept.messages] == ["system", "user"]

    # The agent sends its history back: the reply as it got it, then the tool's result.
    history += [
        {"role": "assistant", "content": None, "tool_calls": [answer], "refusal": None},
        {"role": "tool", "tool_call_id": "c1", "content": "3 hits"},
    ]
    second = request_exchange("/chat/completions", {"messages": history})
    kept = conversations.added("case-1", second.answered({"role": "assistant", "text": "done"}))
    assert kept.messages == ({"role": "tool", "text": "3 hits", "tool_call_id": "c1"},)

    # Another case's conversation is its own; a rewritten history is kept again from where
    # it differs.
    assert len(conversations.added("case-2", second).messages) == 4
    rewritten = request_exchange(
        "/chat/completions", {"messages": [history[0], {"role": "user", "content": "new"}]}
    )
    assert [m["text"] for m in conversations.added("case-1", rewritten).messages] == ["new"]


def test_a_completion_or_embedding_request_gives_its_prompt_as_a_message() -> None:
    exchange = request_exchange("/completions", {"prompt": "Say hi"})
    assert exchange.messages == ({"role": "user", "text": "Say hi"},)
    embedded = request_exchange("/embeddings", {"input": ["a", "b"]})
    assert embedded.messages == ({"role": "user", "text": '["a", "b"]'},)
