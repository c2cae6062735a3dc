"""The stand-in model's side of a tool-calling agent: search, then lookup, then an answer.

`agent_reply` answers a request by where the conversation is: a user's question gets a
call of `search`, one tool result a call of `lookup`, two an answer. A question with
"garbled" in it gets `search` arguments that are not JSON. A judge's request (a rubric
judge's instructions) gets a passing verdict.
"""

from __future__ import annotations

import json

from tests.support.fake_openai import Reply, Request, tool_call

JUDGE_MARK = "You are a strict evaluator"


def is_judge(request: Request) -> bool:
    return JUDGE_MARK in request.system_text


def agent_reply(request: Request) -> Reply:
    if is_judge(request):
        return Reply('{"verdict": "PASS", "reason": "each tool call was needed"}')
    question = request.user_text
    results = [m for m in request.messages if m.get("role") == "tool"]
    if not results:
        arguments = "{not json" if "garbled" in question else json.dumps({"q": question})
        return Reply("", tool_calls=(tool_call("search", arguments, "call_s"),))
    if len(results) == 1:
        return Reply("", tool_calls=(tool_call("lookup", json.dumps({"q": "details"}), "call_l"),))
    return Reply(f"done: {question}", prompt_tokens=20, completion_tokens=7)
