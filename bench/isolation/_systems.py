"""bench.isolation's systems, in a module of their own so that a fresh process imports
them by this module's name however the bench itself is run: (a), (b) and (d) measure
the start by reference, (c) by reference and, with `closure_classifier()`, by value."""

from __future__ import annotations

import asyncio

from oloproof import system


@system(name="bench-bot", version="1")
def classify(case):
    return {"label": "refund" if "refund" in case["question"] else "other"}


def closure_classifier():
    """`classify` again, as a closure: it has no import reference, so it travels to its
    processes by value (cloudpickle), with the two strings it closes over."""
    refund, other = "refund", "other"

    @system(name="bench-bot-by-value", version="1")
    def classify_by_value(case):
        return {"label": refund if refund in case["question"] else other}

    return classify_by_value


@system(name="bench-sleeper", version="1")
async def sleeper(case):
    await asyncio.sleep(0.02)
    return {"label": "other"}
