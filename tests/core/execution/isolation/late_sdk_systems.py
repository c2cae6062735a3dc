"""An async system that imports its model client inside a case, not at module level.

Its process starts without `openai` or `httpx`, so it says it loaded no model client;
each case must still be charged its own call.
"""

from __future__ import annotations

from oloproof import system


@system(name="late-sdk", version="1")
async def late_sdk(case):
    import openai

    reply = await openai.AsyncOpenAI().chat.completions.create(
        model="gpt-test", messages=[{"role": "user", "content": case["question"]}]
    )
    return {"text": reply.choices[0].message.content}
