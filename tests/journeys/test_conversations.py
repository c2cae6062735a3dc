"""Multi-turn conversations along the user's path: docs/agents.md's bot, dataset of three
scripted conversations and two scenarios, and run config in a folder outside the
repository, `oloproof run` against the stand-in model server, which plays the bot's
model, the simulated user and the judge.

The stand-in bot does not know addresses ("I don't know."), so one turn of one scripted
conversation fails the per-turn judge; the gift-seeking simulated user ends after its
first reply, the annoyed one talks until its `max_turns`.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

import pytest

from tests.journeys.conftest import REPO, run_user
from tests.support.agent_replies import is_judge
from tests.support.fake_openai import FakeOpenAI, Reply, Request

pytestmark = pytest.mark.skipif(
    not os.path.exists("/usr/bin/bwrap"), reason="the sandbox needs bubblewrap (scripts/test.sh)"
)

HEADING = "Multi-turn conversations"


def doc_block(language: str, index: int = 0) -> str:
    text = (REPO / "docs" / "agents.md").read_text(encoding="utf-8")
    section = text.split(f"\n## {HEADING}\n", 1)[1].split("\n## ", 1)[0]
    return re.findall(rf"```{language}\n(.*?)```", section, flags=re.S)[index]


def is_simulated_user(request: Request) -> bool:
    return "You play a user" in request.system_text


def stand_in(request: Request) -> Reply:
    if is_judge(request):
        reply_part = request.user_text.split("\nOutput:\n", 1)[1]
        verdict = "FAIL" if "I don't know" in reply_part else "PASS"
        return Reply(json.dumps({"verdict": verdict, "reason": "as the stand-in judge saw it"}))
    if is_simulated_user(request):
        sent = sum(message["role"] == "assistant" for message in request.messages)
        if "gift" in request.system_text and sent == 1:
            return Reply("Lovely, I will take it. <END>", prompt_tokens=30, completion_tokens=6)
        return Reply(f"Customer message {sent + 1}", prompt_tokens=30, completion_tokens=6)
    last = request.messages[-1]["content"]
    return Reply("I don't know." if "address" in last else f"Happy to help: {last}")


def test_conversations_run_turn_by_turn_judged_per_turn_and_per_conversation(
    tmp_path: Path, fake_openai: FakeOpenAI
) -> None:
    folder = tmp_path / "lamp-shop"
    (folder / "data").mkdir(parents=True)
    assert REPO not in folder.parents
    (folder / "bot.py").write_text(doc_block("python"))
    (folder / "data" / "conversations.jsonl").write_text(doc_block("json"))
    (folder / "oloproof.yaml").write_text(doc_block("yaml"))
    fake_openai.respond_with(stand_in)

    done = run_user(
        ["oloproof", "run", "oloproof.yaml", "--json", "result.json"],
        folder,
        timeout=300,
        OLOPROOF_DEFAULT_MODEL="stand-in",
        OLOPROOF_DEFAULT_BASE_URL=fake_openai.base_url,
        OLOPROOF_DEFAULT_PRICE_IN="1",
        OLOPROOF_DEFAULT_PRICE_OUT="2",
        OLOPROOF_DEFAULT_BACKOFF="0.01",
        OLOPROOF_USER_MODEL="user-sim",
        OLOPROOF_USER_PRICE_IN="100",
        OLOPROOF_USER_PRICE_OUT="100",
    )

    assert done.returncode == 0, done.stdout + done.stderr
    assert "user: 6 calls" in done.stdout  # the report's usage, by role
    result = json.loads((folder / "result.json").read_text())
    cases = {case["id"]: case for case in result["cases"]}
    assert all(case["error"] is None for case in cases.values()), cases
    _assert_each_turn_ran_sandboxed(result, cases, folder)
    _assert_the_conversations(cases)
    _assert_the_verdicts(result, cases)
    _assert_the_simulated_users_calls(result, cases, fake_openai)


def _assert_each_turn_ran_sandboxed(result: dict, cases: dict, folder: Path) -> None:
    execution = result["provenance"]["execution"]
    assert execution["isolation"] == "process"
    assert execution["measurements"] == "protected"
    assert execution["sandbox"]["on"] is True
    assert str(folder / "data" / "conversations.jsonl") in execution["sandbox"]["hidden"]
    for case in cases.values():
        replies = len(case["output"]["replies"])
        turns = case["artifacts"]["turns"]
        # One timed call per turn, each with the one model call the gateway metered for it.
        assert len(turns) == replies
        assert all(turn["latency_ms"] > 0 and turn["model_calls"] == 1 for turn in turns)
        assert case["latency_ms"] == pytest.approx(sum(turn["latency_ms"] for turn in turns))
        calls = [s for s in case["trace"]["steps"] if s["kind"] == "model_call"]
        assert len(calls) == replies


def _assert_the_conversations(cases: dict) -> None:
    broken = cases["broken-lamp"]["output"]
    assert broken["replies"] == [
        "Happy to help: Hi, my lamp arrived broken.",
        "Happy to help: Can I get a refund?",
    ]
    assert [m["role"] for m in broken["messages"]] == ["user", "assistant"] * 2
    assert broken["messages"][2] == {"role": "user", "content": "Can I get a refund?"}
    assert cases["new-address"]["output"]["replies"][1] == "I don't know."
    assert cases["gift"]["output"]["replies"] == ["Happy to help: Customer message 1"]
    annoyed = cases["annoyed-customer"]["output"]
    assert [m["content"] for m in annoyed["messages"][::2]] == [
        f"Customer message {n}" for n in range(1, 5)
    ]


def _assert_the_verdicts(result: dict, cases: dict) -> None:
    address = cases["new-address"]["verdicts"]["answers_each_message"]
    assert address["value"] == 0.0
    assert address["scores"]["turns_passed"] == pytest.approx(2 / 3)
    assert address["feedback"].splitlines()[1].startswith("turn 2: failed")
    for name in ("broken-lamp", "opening-hours", "annoyed-customer", "gift"):
        verdict = cases[name]["verdicts"]["answers_each_message"]
        assert (verdict["value"], verdict["scores"]["turns_passed"]) == (1.0, 1.0)
    assert cases["new-address"]["verdicts"]["resolved"]["value"] == 0.0
    assert cases["broken-lamp"]["verdicts"]["resolved"]["value"] == 1.0
    # Each criterion is counted per conversation: five cases, four of them passing.
    metrics = {metric["metric"]: metric for metric in result["metrics"]}
    for criterion in ("answers_each_message", "resolved"):
        assert metrics[criterion]["n_observed"] == 5
        assert metrics[criterion]["estimate"] == pytest.approx(0.8)
    # 2 + 1 + 3 + 4 + 1 turns judged one by one, 5 conversations as a whole.
    judging = result["provenance"]["judging"]
    per_turn = judging["answers_each_message"]
    assert per_turn["judged"] + per_turn["cached"] == 11
    assert judging["resolved"]["judged"] == 5


def _assert_the_simulated_users_calls(result: dict, cases: dict, server: FakeOpenAI) -> None:
    def calls(case: dict[str, Any], role: str) -> list[dict]:
        return [call for call in case["model_calls"] if call["role"] == role]

    annoyed, gift = cases["annoyed-customer"], cases["gift"]
    assert (len(calls(annoyed, "user")), len(calls(annoyed, "system"))) == (4, 4)
    assert (len(calls(gift, "user")), len(calls(gift, "system"))) == (2, 1)
    assert {call["model"] for call in calls(annoyed, "user")} == {"user-sim"}
    assert calls(gift, "user")[0]["cost_usd"] == pytest.approx((30 + 6) * 100 / 1e6)
    # The system is charged its own calls only: (10 in, 5 out) at $1 and $2 per million.
    assert annoyed["cost_usd"] == pytest.approx(4 * (10 * 1 + 5 * 2) / 1e6)
    assert gift["cost_usd"] == pytest.approx((10 * 1 + 5 * 2) / 1e6)
    asked_user = [r for r in server.requests if is_simulated_user(r)]
    assert len(asked_user) == 6
    assert {r.model for r in asked_user} == {"user-sim"}
    # Every judge call, per turn and per conversation, is on its conversation's case: 11
    # turns, of which the two simulated users' first turns are the same and judged once,
    # and 5 conversations.
    judge_calls = sum(len(calls(case, "judge")) for case in cases.values())
    assert sum(is_judge(r) for r in server.requests) == 15
    assert judge_calls == 15
