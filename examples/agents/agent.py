"""An orders desk agent: a model with four tools, in a tool-calling loop, through the openai SDK.

oloproof runs it in processes of its own and points the SDK at its metering gateway
(OPENAI_BASE_URL, OPENAI_API_KEY), which keeps every call in the case's transcript.
"""

import json

from openai import OpenAI

STATUSES = {f"O-{1000 + n}": ("shipped", "lost in transit", "processing")[n % 3] for n in range(60)}


class Desk:
    """One conversation's orders desk: an order must be looked up before it is changed."""

    def __init__(self):
        self.looked_up = set()

    def find_order(self, order):
        if order not in STATUSES:
            return f"{order}: no such order"
        self.looked_up.add(order)
        return f"{order}: {STATUSES[order]}"

    def _change(self, order, done):
        if order not in self.looked_up:
            return f"error: look {order} up first"
        return f"{order}: {done}"

    def refund(self, order):
        return self._change(order, "refunded")

    def cancel_order(self, order):
        return self._change(order, "cancelled")

    def update_address(self, order, address):
        return self._change(order, f"address changed to {address}")


def _tool(name, description, **extra):
    properties = {"order": {"type": "string"}, **{key: {"type": "string"} for key in extra}}
    return {
        "type": "function",
        "function": {
            "name": name,
            "description": description,
            "parameters": {
                "type": "object",
                "properties": properties,
                "required": list(properties),
            },
        },
    }


TOOLS = [
    _tool("find_order", "Look an order up: its status."),
    _tool("refund", "Refund an order that was lost."),
    _tool("cancel_order", "Cancel an order not shipped yet."),
    _tool("update_address", "Send an order to another address.", address="the new address"),
]


def answer(case):
    """One task (`case["question"]`), or one turn of a conversation (`case["messages"]`:
    the conversation so far, ending with the customer's new message)."""
    talk = case.get("messages") or [{"role": "user", "content": case["question"]}]
    reply = desk_turn(talk)
    return {"answer": reply, "content": reply} if "messages" in case else {"answer": reply}


def desk_turn(talk):
    """The desk's reply to the last message of `talk`, after the tools it takes."""
    client = OpenAI()
    desk = Desk()
    messages = [
        {
            "role": "system",
            "content": "You run the orders desk. Look an order up before changing it.",
        },
        *talk,
    ]
    for _ in range(6):
        reply = client.chat.completions.create(model="gpt-4o-mini", messages=messages, tools=TOOLS)
        message = reply.choices[0].message
        messages.append(message.model_dump(exclude_none=True))
        if not message.tool_calls:
            return message.content
        for call in message.tool_calls:
            try:
                result = getattr(desk, call.function.name)(**json.loads(call.function.arguments))
            except (AttributeError, TypeError, ValueError) as problem:
                result = f"error: {problem}"
            messages.append({"role": "tool", "tool_call_id": call.id, "content": result})
    return None
