"""Conversational systems as people write them, at module level so they run in real child
processes: one answers from the history itself, one asks a model with the whole history
through the `openai` SDK (the gateway's key and address come with each case)."""

from __future__ import annotations

import os

import openai

from oloproof import current_case, system


@system(name="counter", version="1")
def counter(case):
    """Replies with what it saw: how many messages, the last one, and its process."""
    messages = case["messages"]
    current_case().attach("seen", len(messages))
    if "crash" in messages[-1]["content"]:
        raise RuntimeError("asked to crash")
    if "number" in messages[-1]["content"]:
        return 42
    return {
        "content": f"{len(messages)} messages, last: {messages[-1]['content']}",
        "tone": case.get("tone", "plain"),
        "pid": os.getpid(),
    }


@system(name="model-bot", version="1")
def model_bot(case):
    """The whole history to the model, its reply back as text."""
    reply = openai.OpenAI().chat.completions.create(
        model="bot-model",
        messages=[{"role": "system", "content": "You are a support bot."}, *case["messages"]],
    )
    return reply.choices[0].message.content
