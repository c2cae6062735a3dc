"""A system that asks the model for its label, in a module a sandboxed process can import
(the test modules that record runs import Django, which a system's process does not set up)."""

from __future__ import annotations

from typing import Any

from oloproof import system


@system(name="chatty-bot", version="1")
def chatty(case: dict[str, Any]) -> dict[str, str]:
    from oloproof.models import chat

    reply = chat([{"role": "user", "content": case["question"]}])
    return {"label": reply.text}
