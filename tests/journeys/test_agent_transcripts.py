"""An agent's transcript along the user's path: docs/agents.md's agent, dataset and run
config in a folder outside the repository, `oloproof run` three times against the
stand-in model server, then the case page in headless Chromium.

The stand-in answers the agent as a model would: `find_order` first, `refund` when asked
for one, then an answer; arguments that are not JSON for a question marked "garbled".
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from tests.journeys.conftest import REPO, run_user
from tests.journeys.test_approvals import account, dashboard, signed_in
from tests.support.agent_replies import is_judge
from tests.support.fake_openai import FakeOpenAI, Reply, Request, tool_call

pytestmark = [pytest.mark.browser, pytest.mark.slow]

GARBLED = {
    "id": "garbled-a1",
    "input": {"question": "Where is order A-1? (garbled)"},
    "expected": {"tools": ["find_order"]},
}


def doc_block(heading: str, language: str, index: int = 0) -> str:
    text = (REPO / "docs" / "agents.md").read_text(encoding="utf-8")
    section = text.split(f"\n## {heading}\n", 1)[1].split("\n## ", 1)[0]
    return re.findall(rf"```{language}\n(.*?)```", section, flags=re.S)[index]


class StandIn:
    """The model's side of docs/agents.md's agent; `lower` asks for orders in lower case
    (other arguments, the same answers)."""

    def __init__(self) -> None:
        self.lower = False

    def __call__(self, request: Request) -> Reply:
        if is_judge(request):
            return Reply('{"verdict": "PASS", "reason": "looked the order up first"}')
        question = request.user_text
        order = re.findall(r"[AB]-\d", question)[0]
        asked = order.lower() if self.lower else order
        results = [m for m in request.messages if m.get("role") == "tool"]
        if not results:
            arguments = (
                '{"order": ' + asked if "garbled" in question else json.dumps({"order": asked})
            )
            return Reply("", tool_calls=(tool_call("find_order", arguments, "call_find"),))
        if len(results) == 1 and "refund" in question:
            return Reply(
                "", tool_calls=(tool_call("refund", json.dumps({"order": asked}), "call_refund"),)
            )
        return Reply(f"Order {order} is taken care of.")


@pytest.fixture
def agent_folder(tmp_path: Path, fake_openai: FakeOpenAI) -> tuple[Path, StandIn]:
    folder = tmp_path / "orders-agent"
    (folder / "data").mkdir(parents=True)
    assert REPO not in folder.parents
    (folder / "agent.py").write_text(doc_block("An agent, evaluated on what it did", "python"))
    rows = doc_block("An agent, evaluated on what it did", "json") + json.dumps(GARBLED) + "\n"
    (folder / "data" / "orders.jsonl").write_text(rows)
    (folder / "oloproof.yaml").write_text(doc_block("An agent, evaluated on what it did", "yaml"))
    stand_in = StandIn()
    fake_openai.respond_with(stand_in)
    return folder, stand_in


def run(folder: Path, server: FakeOpenAI, out: str) -> dict[str, Any]:
    done = run_user(
        ["oloproof", "run", "oloproof.yaml", "--json", out],
        folder,
        timeout=300,
        OLOPROOF_DEFAULT_MODEL="stand-in",
        OLOPROOF_DEFAULT_BASE_URL=server.base_url,
        OLOPROOF_DEFAULT_PRICE_IN="1",
        OLOPROOF_DEFAULT_PRICE_OUT="2",
        OLOPROOF_DEFAULT_BACKOFF="0.01",
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return {case["id"]: case for case in json.loads((folder / out).read_text())["cases"]}


def judge_requests(server: FakeOpenAI) -> int:
    return sum(is_judge(request) for request in server.requests)


def model_calls(case: dict[str, Any]) -> list[dict[str, Any]]:
    return [step for step in case["trace"]["steps"] if step["kind"] == "model_call"]


def test_the_transcript_is_kept_judged_cached_by_its_digest_and_shown(
    agent_folder: tuple[Path, StandIn], fake_openai: FakeOpenAI, browser: Any
) -> None:
    folder, stand_in = agent_folder
    first = run(folder, fake_openai, "first.json")
    agent_requests = fake_openai.request_count - judge_requests(fake_openai)
    # Every call the agent made is in a transcript, counted against the server's count.
    assert sum(len(model_calls(case)) for case in first.values()) == agent_requests == 7
    assert judge_requests(fake_openai) == 3
    refund = first["refund-b2"]
    steps = refund["trace"]["steps"]
    assert (steps[0]["kind"], steps[0]["by"], steps[0]["name"]) == (
        "system_step", "system", "read the refund policy"
    )  # fmt: skip
    assert [s["name"] for s in steps if s["kind"] == "tool_result"] == ["find_order", "refund"]
    assert [s["text"] for s in steps if s["kind"] == "tool_result"] == [
        "lost in transit", "refund issued for B-2"
    ]  # fmt: skip
    assert all(call["latency_ms"] > 0 and call["cost_usd"] > 0 for call in model_calls(refund))
    for criterion in ("right_tools", "looked_up", "few_calls", "sensible"):
        assert refund["verdicts"][criterion]["value"] == 1.0, (criterion, refund["verdicts"])
    garbled = first["garbled-a1"]
    assert garbled["error"] is None
    assert garbled["trace"]["flags"] == [
        "call 1: the arguments of tool call 'find_order' are not JSON; kept as the model gave them"
    ]
    assert model_calls(garbled)[0]["tool_calls"][0]["arguments"] == '{"order": A-1'
    assert first["where-is-a1"]["trace"]["flags"] == []

    # The same conversations again: every trajectory verdict from the cache, no judge call.
    second = run(folder, fake_openai, "second.json")
    assert judge_requests(fake_openai) == 3
    assert all(case["verdicts"]["sensible"]["cached"] for case in second.values())

    # Other arguments, the same outputs: the transcripts differ, so the judge is asked again.
    stand_in.lower = True
    third = run(folder, fake_openai, "third.json")
    assert {i: c["output"] for i, c in third.items()} == {i: c["output"] for i, c in second.items()}
    assert judge_requests(fake_openai) == 6
    assert not any(case["verdicts"]["sensible"]["cached"] for case in third.values())

    password = account(folder, "alice")
    with dashboard(folder) as base, signed_in(browser, base, "alice", password) as page:
        page.goto(base + "/runs/1/cases/refund-b2")
        transcript = page.locator("#transcript")
        assert "3 model calls" in transcript.locator("p").first.inner_text()
        assert page.locator("li.step[data-kind=model_call]").count() == 3
        own = page.locator("li.step-own")
        assert own.count() == 1
        assert "system's own step" in own.inner_text()
        assert "read the refund policy" in own.inner_text()
        first_call = page.locator("li.step[data-kind=model_call]").first
        assert re.search(r"\d ms", first_call.inner_text())
        assert "10 in / 5 out tokens" in first_call.inner_text()
        tool = first_call.locator("details.tool-call")
        assert tool.get_attribute("open") is None
        assert not tool.locator("pre").is_visible()
        tool.locator("summary").click()
        assert tool.locator("pre").inner_text() == '{"order": "B-2"}'
        result = page.locator("li.step[data-kind=tool_result]").first
        assert "find_order" in result.inner_text()
        result.locator("summary").click()
        assert result.locator("pre").inner_text() == "lost in transit"

        page.goto(base + "/runs/1/cases/garbled-a1")
        assert "not JSON" in page.locator("#transcript-flags").inner_text()
        assert page.locator("details.tool-call .badge").inner_text() == "arguments not JSON"
