"""Judge repeats on the dashboard, in real headless Chromium: a run recorded by `oloproof
run` with `judge_repeats: 3` (the stand-in judge answering PASS, FAIL, PASS) shows, on its
page, a Judge repeats card with each repeated judge's split of the variance within a case,
and a case's page shows each judge repeat's reason."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from tests.journeys.conftest import run_user
from tests.journeys.test_approvals import account, dashboard, signed_in
from tests.journeys.test_judge_repeats import BOT, CONFIG, DATASET
from tests.support.fake_openai import FakeOpenAI
from tests.support.wavering_judge import judge_environment, judge_that_wavers

pytestmark = [pytest.mark.browser, pytest.mark.slow]


def test_a_run_page_shows_how_much_of_the_spread_is_the_judges(
    browser: Any, user_folder: Path, fake_openai: FakeOpenAI
) -> None:
    (user_folder / "data.jsonl").write_text(DATASET, encoding="utf-8")
    (user_folder / "bot.py").write_text(BOT, encoding="utf-8")
    (user_folder / "oloproof.yaml").write_text(CONFIG, encoding="utf-8")
    judge_that_wavers(fake_openai)
    ran = run_user(
        ["oloproof", "run", "oloproof.yaml"], user_folder, **judge_environment(fake_openai)
    )
    assert ran.returncode == 0, ran.stderr
    assert "recorded run #1" in ran.stderr
    viola = account(user_folder, "viola", "--viewer")

    with dashboard(user_folder) as base, signed_in(browser, base, "viola", viola) as page:
        page.goto(base + "/runs/1/")
        card = page.locator("#judge-repeat-figures")
        assert "judged every output 3 times" in card.inner_text()
        row = card.locator("tr[data-metric='polite']")
        assert row.locator(".system-share").inner_text() == "0 %"
        assert row.locator(".judge-share").inner_text() == "100 %"
        assert row.locator(".judge-variance").inner_text() == "0.167"  # PASS, FAIL, PASS; PASS × 3
        assert page.locator("tr[data-metric='thanks']").count() == 1  # its metric row only
        assert card.locator("tr[data-metric='thanks']").count() == 0  # judged once
        page.goto(base + "/runs/1/cases/q0%23r1")
        page.wait_for_url(re.compile(r".*/runs/1/cases/q0%23r1$"))
        feedback = page.locator("body").inner_text()
        assert "judge repeat 1: time 1" in feedback
        assert "judge repeat 3: time" in feedback
