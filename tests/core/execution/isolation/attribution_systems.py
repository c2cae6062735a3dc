"""Systems whose model calls are hard to attribute: concurrent, left open, or made late.

Each reaches its model the way the system's own code chooses; whichever case a call is
charged to must still be the case its process held when the call was made.
"""

from __future__ import annotations

import asyncio
import json
import os
import threading
import urllib.request
from typing import Any

import openai

from oloproof import system

CASE_HEADER = "X-Oloproof-Case"
"""The header an earlier gateway took a call's case from: a system can send anything."""


def _ask(question: str, headers: dict[str, str]) -> str:
    """One chat call over plain HTTP, with the key and address the process was given."""
    request = urllib.request.Request(
        os.environ["OPENAI_BASE_URL"] + "/chat/completions",
        data=json.dumps(
            {"model": "gpt-test", "messages": [{"role": "user", "content": question}]}
        ).encode(),
        headers={
            "Authorization": f"Bearer {os.environ['OPENAI_API_KEY']}",
            "Content-Type": "application/json",
            **headers,
        },
    )
    with urllib.request.urlopen(request, timeout=30) as reply:
        answer = json.load(reply)
    return str(answer["choices"][0]["message"]["content"])


@system(name="async-no-header", version="1")
async def async_no_header(case):
    return {"text": await asyncio.to_thread(_ask, case["question"], {})}


@system(name="async-names-one-case", version="1")
async def async_names_one_case(case):
    # Every call claims to be the first case's.
    return {"text": await asyncio.to_thread(_ask, case["question"], {CASE_HEADER: "q0"})}


_left_open: list[Any] = []


@system(name="stream-left-open", version="1")
def stream_left_open(case):
    # Reads the stream's first chunk and returns, the stream still open (and kept, so
    # nothing closes it behind the system's back).
    stream = openai.OpenAI().chat.completions.create(
        model="gpt-test", messages=[{"role": "user", "content": case["question"]}], stream=True
    )
    first = next(iter(stream))
    _left_open.append(stream)
    return {"role": first.choices[0].delta.role}


_next_case_began = threading.Event()
_late: list[threading.Thread] = []


@system(name="late-thread", version="1")
def late_thread(case):
    """The first case leaves a thread that calls the model once the next case has begun;
    the next case waits for that call to be answered, then makes its own."""
    if not _late:
        client = openai.OpenAI()  # made in the first case, handed to the thread

        def call_later() -> None:
            _next_case_began.wait()
            client.chat.completions.create(
                model="gpt-test", messages=[{"role": "user", "content": "late"}]
            )

        _late.append(threading.Thread(target=call_later))
        _late[0].start()
        return {"text": "a thread will call later"}
    _next_case_began.set()
    _late[0].join()
    reply = openai.OpenAI().chat.completions.create(
        model="gpt-test", messages=[{"role": "user", "content": case["question"]}]
    )
    return {"text": reply.choices[0].message.content}
