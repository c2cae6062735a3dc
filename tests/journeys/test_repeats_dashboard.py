"""Repeats from the dashboard, in real headless Chromium: a runner made with `oloproof user
create` queues a run with 3 repeats from the New-run form, the worker `oloproof serve`
started runs each case three times, the run page shows pass@3, pass^3 and the flaky cases,
the case table marks each repeat, and each repeat's page shows all three side by side:
output, verdicts, latency and cost.

The system asks the stand-in model server for its label, naming the repeat it is; the
platform meters every call at $1,000 per million input tokens, so each repeat costs $0.01.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from tests.journeys.conftest import run_user
from tests.journeys.test_approvals import account, dashboard, post_form, signed_in
from tests.support.fake_openai import FakeOpenAI, Reply, Request

pytestmark = [pytest.mark.browser, pytest.mark.slow]


SYSTEM = """\
from oloproof import current_case, system
from oloproof.models import complete


@system(name="flaky-bot", version="1")
def answer(question):
    return {"label": complete(f"{current_case().id}: say {question['say']}").strip()}
"""
FORM = {
    "system": "bot.py:answer",
    "dataset": "data/cases.jsonl",
    "evaluators": "ExactMatch: {criterion: right, field: label}",
}


def labelled(request: Request) -> Reply:
    """q2 and q3 answered wrong every time, q4 and q5 on their second repeat only."""
    repeat_id, said = re.findall(r"(q\d#r\d): say (\w+)", request.user_text)[0]
    number, repeat = int(repeat_id[1]), repeat_id[-1]
    wrong = number in (2, 3) or (number >= 4 and repeat == "2")
    return Reply("wrong" if wrong else said, prompt_tokens=10)


def _project(folder: Path, server: FakeOpenAI) -> str:
    """The user's folder with its system and cases, registered as a code root of the
    default project; a runner's password."""
    (folder / "bot.py").write_text(SYSTEM, encoding="utf-8")
    rows = [
        {"id": f"q{i}", "input": {"say": "yes"}, "expected": {"label": "yes"}} for i in range(6)
    ]
    (folder / "data" / "cases.jsonl").write_text("".join(json.dumps(row) + "\n" for row in rows))
    rita = account(folder, "rita")
    registered = run_user(["oloproof", "project", "root", "default", str(folder)], folder)
    assert registered.returncode == 0, registered.stderr
    server.respond_with(labelled)
    return rita


def test_a_run_with_repeats_from_the_form_shows_every_repeat_side_by_side(
    browser: Any, user_folder: Path, fake_openai: FakeOpenAI
) -> None:
    rita = _project(user_folder, fake_openai)
    models = {
        "OLOPROOF_SYSTEM_MODEL": "stand-in",
        "OLOPROOF_SYSTEM_BASE_URL": fake_openai.base_url,
        "OLOPROOF_SYSTEM_PRICE_IN": "1000",
        "OLOPROOF_SYSTEM_PRICE_OUT": "0",
    }
    with (
        dashboard(user_folder, "serve", **models) as base,
        signed_in(browser, base, "rita", rita) as page,
    ):
        queue_a_run_with_repeats(page, base, user_folder)
        read_the_repeat_figures(page, base)
        read_the_case_table(page, base)
        read_a_case_across_its_repeats(page)
    assert fake_openai.request_count == 18  # each of 6 cases, three times


def queue_a_run_with_repeats(page: Any, base: str, folder: Path) -> None:
    page.goto(base + "/runs/new/")
    page.wait_for_url(re.compile(r".*/runs/new/$"))
    refused = post_form(
        page, base, "/runs/new/", {**FORM, "base_dir": str(folder), "repeats": "101"}
    )
    assert refused.status == 200
    assert "repeats must be a whole number from 1 to 100" in refused.text()
    queue_from_the_form(page, folder, FORM, repeats="3")


def queue_from_the_form(
    page: Any, folder: Path, form: dict[str, str], run: int = 1, **counts: str
) -> None:
    """Fill the New-run form (`counts`: its repeat fields), queue the run (number `run`),
    and wait for the worker to finish it."""
    page.fill("input[name=base_dir]", str(folder))
    for name, value in form.items():
        page.fill(f"[name={name}]", value)
    for name, value in counts.items():
        page.fill(f"input[name={name}]", value)
    page.click("button[type=submit].primary")
    page.wait_for_url(re.compile(rf".*/runs/{run}/$"))
    assert f"Run {run} submitted" in page.locator(".messages .success").inner_text()
    page.wait_for_selector(f"[data-status-of='{run}'].status-succeeded", timeout=180_000)


def read_the_repeat_figures(page: Any, base: str) -> None:
    page.goto(base + "/runs/1/")
    assert "Each of 6 cases ran 3 times" in page.locator("#repeat-figures").inner_text()
    row = page.locator("#repeat-figures tr[data-metric='right']")
    assert row.locator(".pass-at-k").inner_text() == "0.667"
    assert row.locator(".pass-all-k").inner_text() == "0.333"
    counts = [
        row.locator(f".{name}").inner_text() for name in ("stable-pass", "stable-fail", "flaky")
    ]
    assert counts == ["2", "2", "2"]
    assert row.locator(".flaky-cases").inner_text() == "q4, q5"
    metric = page.locator("table.metrics-table tbody tr", has_text="right")
    assert "0.556" in metric.inner_text()  # the mean of the six cases' means


def read_the_case_table(page: Any, base: str) -> None:
    page.goto(base + "/runs/1/cases/")
    assert "ran each case 3 times" in page.locator("#repeats-note").inner_text()
    marked = page.locator("table.cases-table tbody tr[data-repeat]")
    assert marked.count() == 18
    assert page.locator("table.cases-table tr.first-repeat").count() == 6
    row = page.locator("table.cases-table tr[data-case='q4#r2']")
    assert row.get_attribute("data-repeat-of") == "q4"
    assert "repeat 2 of 3" in row.inner_text()
    row.locator("td.case-cell a").click()
    page.wait_for_url(re.compile(r".*/runs/1/cases/q4%23r2$"))


def read_a_case_across_its_repeats(page: Any) -> None:
    assert page.locator("#repeat-of").inner_text() == "repeat 2 of 3 of q4"
    table = page.locator("#repeats table.repeats-table")
    assert [
        table.locator("thead th[data-repeat]").nth(i).get_attribute("data-repeat") for i in range(3)
    ] == ["1", "2", "3"]
    assert "(this page)" in table.locator("thead th.shown-repeat").text_content()
    outputs = table.locator("tr.repeat-outputs td")
    assert ['"yes"' in outputs.nth(i).inner_text() for i in range(3)] == [True, False, True]
    assert '"wrong"' in outputs.nth(1).inner_text()
    verdicts = table.locator("tr.repeat-verdicts[data-criterion='right'] td")
    values = [verdicts.nth(i).locator("strong").inner_text() for i in range(3)]
    assert values == ["1.000", "0.000", "1.000"]
    latencies = table.locator("tr.repeat-latencies td")
    assert all(latencies.nth(i).inner_text().endswith(" ms") for i in range(3))
    costs = table.locator("tr.repeat-costs td")
    assert [costs.nth(i).inner_text() for i in range(3)] == ["$0.01"] * 3

    table.locator("thead a", has_text="repeat 3").click()  # reached from any repeat
    page.wait_for_url(re.compile(r".*/runs/1/cases/q4%23r3$"))
    assert page.locator("#repeat-of").inner_text() == "repeat 3 of 3 of q4"
    assert page.locator("#repeats tr.repeat-outputs td").count() == 3


def test_auto_from_the_form_tries_the_flaky_cases_five_times_and_the_rest_once(
    browser: Any, user_folder: Path, fake_openai: FakeOpenAI
) -> None:
    """A run of three repeats from the form, then one with repeats `auto`: the second
    reads the first, asks the model 14 times (q0–q3 once, q4 and q5 five times), and the
    run page says how it spent them."""
    rita = _project(user_folder, fake_openai)
    models = {"OLOPROOF_SYSTEM_MODEL": "stand-in", "OLOPROOF_SYSTEM_BASE_URL": fake_openai.base_url}
    with (
        dashboard(user_folder, "serve", **models) as base,
        signed_in(browser, base, "rita", rita) as page,
    ):
        page.goto(base + "/runs/new/")
        queue_from_the_form(page, user_folder, FORM, repeats="3")
        page.goto(base + "/runs/new/")
        refused = post_form(
            page, base, "/runs/new/", {**FORM, "base_dir": str(user_folder), "repeats": "often"}
        )
        assert "repeats must be a whole number from 1 to 100, or auto" in refused.text()
        page.goto(base + "/runs/new/")
        queue_from_the_form(page, user_folder, FORM, run=2, repeats="auto")
        page.goto(base + "/runs/2/")
        card = page.locator("#repeat-figures").inner_text()
        row = page.locator("#repeat-figures tr[data-metric='right']")
        counts = [row.locator(f".{name}").inner_text() for name in ("flaky", "tried-once")]
        metric = page.locator("table.metrics-table tbody tr", has_text="right").inner_text()
        page.goto(base + "/runs/2/cases/")
        note = page.locator("#repeats-note").inner_text()
    assert "2 of 6 cases ran 5 times and 4 ran once: 14 calls" in card
    assert "in the last 1 run of these cases" in card
    assert counts == ["2", "4"]
    assert "0.600" in metric  # q0, q1 right; q2, q3 wrong; q4, q5 right 4 times of 5
    assert "once or 5 times (repeats: auto" in note
    assert fake_openai.request_count == 18 + 14
