"""Systems that read a component, for one pool running several releases in turn."""

from __future__ import annotations

import asyncio
import os
import uuid

from oloproof import component, system

PROCESS_TOKEN = uuid.uuid4().hex
"""Which process ran a case (in a sandbox every system's process has the same pid)."""


@system(name="texts", version="1", components={"instruction": "declared"})
def texts(case):
    if case.get("crash"):
        os._exit(3)
    return {"instruction": component("instruction"), "process": PROCESS_TOKEN}


@system(name="async-texts", version="1", components={"instruction": "declared"})
async def async_texts(case):
    await asyncio.sleep(0.01)
    return {"instruction": component("instruction"), "process": PROCESS_TOKEN}


@system(name="other", version="1", components={"instruction": "declared"})
def other(case):
    return {"instruction": component("instruction")}
