"""Systems that call models in every way agents do, run in real child processes."""

from __future__ import annotations

import os
import threading

import openai

from oloproof import current_case, system
from oloproof.models import chat, configure


def _client() -> openai.OpenAI:
    # As agents write it: the SDK reads OPENAI_BASE_URL and OPENAI_API_KEY itself.
    return openai.OpenAI()


@system(name="sdk-plain", version="1")
def sdk_plain(case):
    reply = _client().chat.completions.create(
        model="gpt-test", messages=[{"role": "user", "content": case["question"]}]
    )
    return {"text": reply.choices[0].message.content}


@system(name="sdk-tools", version="1")
def sdk_tools(case):
    reply = _client().chat.completions.create(
        model="gpt-test",
        messages=[{"role": "user", "content": case["question"]}],
        tools=[
            {
                "type": "function",
                "function": {"name": "lookup", "parameters": {"type": "object"}},
            }
        ],
    )
    calls = reply.choices[0].message.tool_calls or []
    return {"tools": [call.function.name for call in calls]}


@system(name="sdk-stream", version="1")
def sdk_stream(case):
    stream = _client().chat.completions.create(
        model="gpt-test",
        messages=[{"role": "user", "content": case["question"]}],
        stream=True,
    )
    return {
        "text": "".join(chunk.choices[0].delta.content or "" for chunk in stream if chunk.choices)
    }


@system(name="sdk-async", version="1")
async def sdk_async(case):
    client = openai.AsyncOpenAI()
    reply = await client.chat.completions.create(
        model="gpt-test", messages=[{"role": "user", "content": case["question"]}]
    )
    return {"text": reply.choices[0].message.content}


@system(name="threaded", version="1")
def threaded(case):
    answers = []
    worker = threading.Thread(
        target=lambda: answers.append(
            _client().chat.completions.create(
                model="gpt-test", messages=[{"role": "user", "content": case["question"]}]
            )
        )
    )
    worker.start()
    worker.join()
    return {"text": answers[0].choices[0].message.content}


@system(name="cost-cheat", version="1")
def cost_cheat(case):
    # Every way a system could hide what it spent, all at once.
    configure("system", price_in=0, price_out=0)
    os.environ["OLOPROOF_SYSTEM_PRICE_IN"] = "0"
    os.environ["OLOPROOF_SYSTEM_PRICE_OUT"] = "0"
    reply = chat([{"role": "user", "content": case["question"]}])
    current_case()._record.measurements.model_calls.clear()
    return {"text": reply.text}
