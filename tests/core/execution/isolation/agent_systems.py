"""Agents as people write them: the `openai` SDK in a tool-calling loop, run in real child
processes; their tools are plain Python functions, one of them reported as a step."""

from __future__ import annotations

import json

import openai

from oloproof import current_case, system

TOOLS = [
    {
        "type": "function",
        "function": {
            "name": name,
            "description": f"the {name} tool",
            "parameters": {"type": "object", "properties": {"q": {"type": "string"}}},
        },
    }
    for name in ("search", "lookup")
]


def run_tool(name: str, arguments: str) -> str:
    try:
        query = json.loads(arguments).get("q", "")
    except ValueError:
        return "error: the arguments were not JSON"
    return f"{name} found 3 results for {query}"


def agent_loop(question: str, *, stream: bool = False, steps: bool = False) -> dict:
    client = openai.OpenAI()
    messages: list = [
        {"role": "system", "content": "You answer with the tools."},
        {"role": "user", "content": question},
    ]
    for _ in range(6):
        if stream:
            message = _streamed(client, messages)
        else:
            reply = client.chat.completions.create(model="gpt-test", messages=messages, tools=TOOLS)
            message = reply.choices[0].message.model_dump(exclude_none=True)
        messages.append(message)
        calls = message.get("tool_calls") or []
        if not calls:
            return {"answer": message.get("content"), "turns": len(messages)}
        for call in calls:
            result = run_tool(call["function"]["name"], call["function"]["arguments"])
            if steps:
                current_case().step("ran tool", {"tool": call["function"]["name"]})
            messages.append({"role": "tool", "tool_call_id": call["id"], "content": result})
    return {"answer": None, "turns": len(messages)}


def _streamed(client: openai.OpenAI, messages: list) -> dict:
    text, calls = "", {}
    stream = client.chat.completions.create(
        model="gpt-test", messages=messages, tools=TOOLS, stream=True
    )
    for chunk in stream:
        if not chunk.choices:
            continue
        delta = chunk.choices[0].delta
        text += delta.content or ""
        for part in delta.tool_calls or []:
            entry = calls.setdefault(part.index, {"id": "", "name": "", "arguments": ""})
            entry["id"] = part.id or entry["id"]
            entry["name"] += part.function.name or ""
            entry["arguments"] += part.function.arguments or ""
    message: dict = {"role": "assistant", "content": text}
    if calls:
        message["tool_calls"] = [
            {
                "id": c["id"],
                "type": "function",
                "function": {"name": c["name"], "arguments": c["arguments"]},
            }
            for _, c in sorted(calls.items())
        ]
    return message


@system(name="tool-agent", version="1")
def tool_agent(case):
    return agent_loop(case["question"])


@system(name="streaming-agent", version="1")
def streaming_agent(case):
    return agent_loop(case["question"], stream=True)


@system(name="agent-with-steps", version="1")
def agent_with_steps(case):
    current_case().step("planned", {"plan": ["search", "answer"]})
    answer = agent_loop(case["question"], steps=True)
    current_case().step("checked", {"ok": True})
    return answer


@system(name="wordy-steps", version="1")
def wordy_steps(case):
    current_case().step("read a file", {"text": "x" * 50_000})
    for number in range(case.get("steps", 0)):
        current_case().step("tick", number)
    return {"answer": "done"}
