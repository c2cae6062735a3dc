"""A model judge on the stand-in server that answers differently each time it is asked."""

from __future__ import annotations

import json
import threading

from tests.support.fake_openai import FakeOpenAI, Reply, Request

JUDGE_MODEL = "stand-in-judge"


def judge_that_wavers(server: FakeOpenAI) -> None:
    """The second time it sees a text (an input and an output): FAIL; otherwise PASS."""
    seen: dict[str, int] = {}
    lock = threading.Lock()

    def reply(request: Request) -> Reply:
        with lock:
            times = seen[request.user_text] = seen.get(request.user_text, 0) + 1
        word = "FAIL" if times == 2 else "PASS"
        return Reply(json.dumps({"verdict": word, "reason": f"time {times}"}))

    server.respond_with(reply)


def judge_environment(server: FakeOpenAI) -> dict[str, str]:
    """The environment that points the judge role at the stand-in server."""
    return {
        "OLOPROOF_JUDGE_MODEL": JUDGE_MODEL,
        "OLOPROOF_JUDGE_BASE_URL": server.base_url,
        "OLOPROOF_DEFAULT_BACKOFF": "0.01",
    }
