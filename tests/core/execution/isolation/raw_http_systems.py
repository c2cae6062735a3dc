"""A system that reaches its model with the standard library alone, no model client.

Its processes load no model SDK, so the gateway is not serving when they start; the
first call has to bring it up (see `Gateway.serve_when_called`).
"""

from __future__ import annotations

import json
import os
import urllib.request

from oloproof import system


@system(name="raw-http", version="1")
def raw_http(case):
    request = urllib.request.Request(
        os.environ["OPENAI_BASE_URL"] + "/chat/completions",
        data=json.dumps(
            {"model": "gpt-test", "messages": [{"role": "user", "content": case["question"]}]}
        ).encode(),
        headers={
            "Authorization": f"Bearer {os.environ['OPENAI_API_KEY']}",
            "Content-Type": "application/json",
        },
    )
    with urllib.request.urlopen(request, timeout=30) as reply:
        answer = json.load(reply)
    return {"text": answer["choices"][0]["message"]["content"]}
