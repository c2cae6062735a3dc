"""Transcripts wherever a case is read, and two releases' transcripts compared step by step.

docs/agents.md's agent, dataset and run config in a folder outside the repository, run
twice through `oloproof run` against the stand-in model: the second time the model asks
for the orders in lower case (other tool arguments, the same answers). Then the result
files, `oloproof export`, `oloproof compare --steps`, the REST API and the compare page in
headless Chromium all give the same transcripts and the same first differing step.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.journeys import test_agent_transcripts as agent_journey
from tests.journeys.conftest import run_user
from tests.journeys.test_agent_transcripts import StandIn, run
from tests.journeys.test_approvals import account, dashboard, signed_in
from tests.support.fake_openai import FakeOpenAI

pytestmark = [pytest.mark.browser, pytest.mark.slow]
agent_folder = agent_journey.agent_folder

SCRIPT = """\
import json

import oloproof

recorded = oloproof.load(1)
print(json.dumps({case.id: case.trace.to_dict() for case in recorded.cases}))
difference = oloproof.transcript_difference("first.json", 2, "refund-b2")
print(difference.number, list(difference.fields))
"""
MEASURED = {"latency_ms", "input_tokens", "output_tokens", "cost_usd", "at"}


def said(step: dict[str, Any]) -> dict[str, Any]:
    return {key: value for key, value in step.items() if key not in MEASURED}


def first_step_differing(old: list[dict[str, Any]], new: list[dict[str, Any]]) -> int:
    """Counted here by hand from the two result files, for the product to agree with."""
    for number, (left, right) in enumerate(zip(old, new, strict=False), 1):
        if said(left) != said(right):
            return number
    return min(len(old), len(new)) + 1


def test_transcripts_are_read_everywhere_and_compared_step_by_step(
    agent_folder: tuple[Path, StandIn], fake_openai: FakeOpenAI, browser: Any
) -> None:
    folder, stand_in = agent_folder
    first = run(folder, fake_openai, "first.json")
    stand_in.lower = True
    second = run(folder, fake_openai, "second.json")
    old, new = first["refund-b2"]["trace"]["steps"], second["refund-b2"]["trace"]["steps"]
    differing = first_step_differing(old, new)
    # The policy step and the two messages are the same; the first call's arguments are not.
    assert differing == 4
    assert old[3]["tool_calls"][0]["arguments"] == '{"order": "B-2"}'
    assert new[3]["tool_calls"][0]["arguments"] == '{"order": "b-2"}'

    # The JSONL export of the recorded run carries each case's transcript as recorded.
    exported = run_user(["oloproof", "export", "1", "-o", "cases.jsonl"], folder)
    assert exported.returncode == 0, exported.stderr
    lines = (folder / "cases.jsonl").read_text().splitlines()
    records = {record["case_id"]: record for record in map(json.loads, lines)}
    assert set(records) == set(first)
    for case_id, case in first.items():
        assert records[case_id]["transcript"] == case["trace"], case_id

    # The command: from the two result files, and from the store (a run read back whole).
    from_files = run_user(
        ["oloproof", "compare", "first.json", "second.json", "--steps", "refund-b2"], folder
    )
    assert from_files.returncode == 0, from_files.stderr
    assert "case refund-b2: the transcripts first differ at step 4 of 8" in from_files.stdout
    assert 'baseline:  model call (assistant): calls find_order({"order": "B-2"})' in (
        from_files.stdout
    )
    assert 'candidate: model call (assistant): calls find_order({"order": "b-2"})' in (
        from_files.stdout
    )
    from_store = run_user(
        ["oloproof", "compare", "1", "2", "--steps", "refund-b2", "--json"], folder
    )
    assert from_store.returncode == 0, from_store.stderr
    found = json.loads(from_store.stdout)["transcript_difference"]
    assert found["difference"]["step"] == 4
    assert found["difference"]["fields"] == ["tool_calls"]
    assert said(found["difference"]["baseline"]) == said(old[3])
    assert said(found["difference"]["candidate"]) == said(new[3])
    # The library: a recorded run read back carries the transcripts the result file has.
    (folder / "steps.py").write_text(SCRIPT)
    scripted = run_user(["python", "steps.py"], folder)
    assert scripted.returncode == 0, scripted.stderr
    lines = scripted.stdout.splitlines()
    assert json.loads(lines[0]) == {case_id: case["trace"] for case_id, case in first.items()}
    assert lines[1:] == ["4 ['tool_calls']"]
    unknown = run_user(["oloproof", "compare", "1", "2", "--steps", "no-such-case"], folder)
    assert unknown.returncode == 3, unknown.stdout
    assert "neither run has a case with this id" in unknown.stderr
    assert "Traceback" not in unknown.stderr

    password = account(folder, "alice")
    with dashboard(folder) as base, signed_in(browser, base, "alice", password) as page:
        listed = page.request.get(base + "/api/runs/1/cases").json()["items"]
        assert {case["case_id"] for case in listed} == set(first)
        for case in listed:
            assert case["transcript_url"].startswith("/api/runs/1/transcript?case_id=")
            answer = page.request.get(base + case["transcript_url"])
            assert answer.status == 200
            kept = answer.json()
            assert kept["steps"] == first[case["case_id"]]["trace"]["steps"]
            assert kept["flags"] == first[case["case_id"]]["trace"]["flags"]
        missing = page.request.get(base + "/api/runs/1/transcript?case_id=no-such-case")
        assert missing.status == 404
        assert "has no transcript" in missing.json()["detail"]

        page.goto(base + "/compare/?baseline=1&candidate=2")
        row = page.locator("tr[data-case='refund-b2']")
        row.locator("a.steps-link").click()
        page.wait_for_url("**/compare/case/refund-b2?baseline=1&candidate=2")
        said_first = page.locator("#first-difference")
        assert said_first.get_attribute("data-step") == "4"
        assert "step 4" in said_first.inner_text()
        assert "tool_calls differ" in said_first.inner_text()
        for side, order in (("#baseline-step", "B-2"), ("#candidate-step", "b-2")):
            step = page.locator(f"{side} li.step")
            assert step.get_attribute("data-kind") == "model_call"
            step.locator("details.tool-call summary").click()
            assert step.locator("details.tool-call pre").inner_text() == (
                json.dumps({"order": order})
            )
        shared = page.locator("details.shared-steps")
        assert "The 3 steps both took first" in shared.locator(":scope > summary").inner_text()
        assert shared.locator("li.step").count() == 3
        assert page.locator("a.baseline-case").get_attribute("href") == ("/runs/1/cases/refund-b2")
