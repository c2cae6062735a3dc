"""Judge repeats from the dashboard's New-run form, in real headless Chromium: a runner made
with `oloproof user create` queues a run with a model judge and Judge repeats 3, the worker
`oloproof serve` started judges every output three times (the stand-in judge answering
PASS, FAIL, PASS), and the run page shows the Judge repeats card."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.journeys.conftest import run_user
from tests.journeys.test_approvals import account, dashboard, post_form, signed_in
from tests.journeys.test_repeats_dashboard import queue_from_the_form
from tests.support.fake_openai import FakeOpenAI
from tests.support.wavering_judge import judge_environment, judge_that_wavers

pytestmark = [pytest.mark.browser, pytest.mark.slow]

BOT = """
from oloproof import current_case


def answer(question):
    return {"text": f"Thanks for asking about {question['q']} ({current_case().id})"}
"""
FORM = {
    "system": "bot.py:answer",
    "dataset": "data/cases.jsonl",
    "evaluators": "RubricJudge: {criterion: polite, rubric: 'The answer is polite.'}",
}


def _project(folder: Path) -> str:
    (folder / "bot.py").write_text(BOT, encoding="utf-8")
    rows = [{"id": f"q{i}", "input": {"q": i}, "expected": {}} for i in range(4)]
    (folder / "data" / "cases.jsonl").write_text("".join(json.dumps(row) + "\n" for row in rows))
    rita = account(folder, "rita")
    registered = run_user(["oloproof", "project", "root", "default", str(folder)], folder)
    assert registered.returncode == 0, registered.stderr
    return rita


def test_a_run_queued_from_the_form_judges_each_output_three_times(
    browser: Any, user_folder: Path, fake_openai: FakeOpenAI
) -> None:
    rita = _project(user_folder)
    judge_that_wavers(fake_openai)
    with (
        dashboard(user_folder, "serve", **judge_environment(fake_openai)) as base,
        signed_in(browser, base, "rita", rita) as page,
    ):
        page.goto(base + "/runs/new/")
        refused = post_form(
            page, base, "/runs/new/", {**FORM, "base_dir": str(user_folder), "judge_repeats": "0"}
        )
        assert "judge_repeats must be a whole number from 1 to 100" in refused.text()
        assert "each output is judged at least once" in refused.text()
        queue_from_the_form(page, user_folder, FORM, judge_repeats="3")
        page.goto(base + "/runs/1/")
        card = page.locator("#judge-repeat-figures")
        assert "judged every output 3 times" in card.inner_text()
        row = card.locator("tr[data-metric='polite']")
        assert row.locator(".judge-variance").inner_text() == "0.333"  # PASS, FAIL, PASS
        assert row.locator(".system-variance").inner_text() == "needs repeats"
    assert fake_openai.request_count == 4 * 3
