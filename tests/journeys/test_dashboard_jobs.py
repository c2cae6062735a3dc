"""The dashboard's jobs, end to end, in real headless Chromium, as the people who do them.

A project folder outside the repository with the README's files (its system, a run config
and the release.yaml of "Gates and comparisons"), three releases of the bot recorded with
`oloproof run` (the second one regresses on six cases) and a scratch run of the third with
a throwaway evaluator, accounts made with `oloproof user create`, then the dashboard
`oloproof serve` serves on that store: an approver browses the history, compares two and
three releases, finds the regression's cases, approves a gate from the queue and revokes
the decision; a runner hides the scratch run and starts a run from the New-run form once
a project admin has registered the code root and added a member on the settings pages; a
viewer reads and may decide nothing.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from tests.journeys.conftest import readme_block, run_user
from tests.journeys.test_approvals import (
    account,
    dashboard,
    fill_run_form,
    nav,
    post_form,
    readme_project,
    signed_in,
)

pytestmark = [pytest.mark.browser, pytest.mark.slow]


README_ANSWER = 'return {"label": "refund" if "refund" in case["question"].lower() else "other"}'
# Release 2 "tightens" the rule and sends every question naming "#1…" elsewhere: the six
# refund questions #1 and #10–#14 regress.
REGRESSED_ANSWER = (
    'question = case["question"].lower()\n'
    '    return {"label": "refund" if "refund" in question and "#1" not in question else "other"}'
)
REGRESSED_CASES = ["refund_01", "refund_10", "refund_11", "refund_12", "refund_13", "refund_14"]
SCRATCH_CONFIG = """\
system: bot.py:answer
dataset: data/example.jsonl
evaluators:
  - debug_checks.py:says_refund
"""
SCRATCH_EVALUATOR = """\
from oloproof.evaluators import evaluator


@evaluator(criterion="says_refund", reads=("output",))
def says_refund(case):
    return case.output["label"] == "refund"
"""
RUN_DONE = re.compile(r".*/runs/\d+/(#\w+)?$")


def release(folder: Path, version: str, answer: str = README_ANSWER) -> None:
    """The README's system as release `version`, answering with `answer`."""
    system = readme_block("In 30 seconds").split("\n\nresult = evaluate(")[0]
    assert 'version="1"' in system
    assert README_ANSWER in system
    text = system.replace('version="1"', f'version="{version}"').replace(README_ANSWER, answer)
    (folder / "bot.py").write_text(text + "\n", encoding="utf-8")


def record(folder: Path, config: str = "oloproof.yaml") -> str:
    """`oloproof run CONFIG`; its output. A gated run exits 0, 1 or 2 (pass, fail, wait)."""
    done = run_user(["oloproof", "run", config], folder)
    assert done.returncode in (0, 1, 2), done.stdout + done.stderr
    return done.stdout + done.stderr


def history(folder: Path) -> None:
    """Runs 1–3: releases 1, 2 (regressed) and 3 under the README's policy; run 4: a scratch
    run of release 3 with a throwaway evaluator and no policy."""
    readme_project(folder)
    release(folder, "1")
    assert "recorded run #1" in record(folder)
    release(folder, "2", REGRESSED_ANSWER)
    assert "recorded run #2" in record(folder)
    release(folder, "3")
    assert "recorded run #3" in record(folder)
    (folder / "debug_checks.py").write_text(SCRATCH_EVALUATOR, encoding="utf-8")
    (folder / "scratch.yaml").write_text(SCRATCH_CONFIG, encoding="utf-8")
    assert "recorded run #4" in record(folder, "scratch.yaml")


def history_rows(page: Any) -> dict[int, str]:
    rows = page.locator("table.runs-table tbody tr[data-run]")
    return {
        int(rows.nth(i).get_attribute("data-run")): rows.nth(i).inner_text()
        for i in range(rows.count())
    }


def compare_ticked(page: Any, base: str, runs: list[int]) -> None:
    """The history, the runs ticked, "Compare ticked runs" pressed."""
    page.goto(base + "/")
    for run in runs:
        page.check(f"input[name=runs][value='{run}']")
    page.click("text=Compare ticked runs")
    page.wait_for_url(re.compile(r".*/compare/\?.*runs=.*"))


def test_an_approver_browses_compares_finds_the_regression_approves_and_revokes(
    browser: Any, user_folder: Path
) -> None:
    history(user_folder)
    alice = account(user_folder, "alice", "--approver")

    with dashboard(user_folder) as base, signed_in(browser, base, "alice", alice) as page:
        # Browse the history: every run, newest first, with its release.
        rows = history_rows(page)
        assert list(rows) == [4, 3, 2, 1]
        for run, version in ((1, "@1"), (2, "@2"), (3, "@3"), (4, "@3")):
            assert "support-bot" in rows[run]
            assert version in rows[run]
        assert "says_refund" in rows[4]
        page.select_option("select[name=release]", "2")
        page.click("form.filters button[type=submit]")
        page.wait_for_url(re.compile(r".*release=2.*"))
        assert list(history_rows(page)) == [2]

        # Compare two releases: the regression and its cases.
        compare_ticked(page, base, [1, 2])
        assert "Compare 2 runs" in page.locator("h1").inner_text()
        row = page.locator("table.side-by-side tr[data-metric='exact_label'][data-run='2']")
        assert row.locator("td.num strong").inner_text() == "-0.200"  # release 2 minus 1
        assert row.locator("a.to-regressed").inner_text() == str(len(REGRESSED_CASES))
        row.locator("a.to-regressed").click()
        page.wait_for_url(re.compile(r".*show=regressed.*"))
        grid = page.locator("#grid table.grid-table tbody tr[data-case]")
        found = sorted(grid.nth(i).get_attribute("data-case") for i in range(grid.count()))
        assert found == REGRESSED_CASES
        case = page.locator("#grid tr[data-case='refund_13']")
        assert "Can I get a refund? #13" in case.locator("td.text-cell").first.inner_text()
        assert "refund" in case.locator("td.baseline-output").inner_text()
        assert "other" in case.locator("td.candidate-output").inner_text()
        case.locator("a.candidate-link").click()
        page.wait_for_url(re.compile(r".*/runs/2/cases/.*"))
        assert "Can I get a refund? #13" in page.locator("main").inner_text()

        # Compare three releases, each against the first.
        compare_ticked(page, base, [1, 2, 3])
        assert "Compare 3 runs" in page.locator("h1").inner_text()
        assert "baseline" in page.locator("table.side-runs tr[data-run='1']").inner_text()
        pairs = page.locator("table.side-by-side tr[data-metric='exact_label']")
        assert pairs.count() == 2
        three = page.locator("table.side-by-side tr[data-metric='exact_label'][data-run='3']")
        assert "regressed" not in three.locator("td.flag").inner_text()

        # Approve a gate from the queue, then revoke the decision.
        assert page.locator("#gates-waiting").inner_text() == "3"
        page.click("header.topbar nav a[href='/gates/']")
        page.wait_for_url(re.compile(r".*/gates/$"))
        assert "3 gates wait for your decision" in page.locator("#waiting-for-you").inner_text()
        queued = page.locator("table.pending-table tbody tr[data-run='1']")
        queued.locator("a.button", has_text="Decide…").click()
        page.wait_for_url(re.compile(r".*/runs/1/#gate$"))
        page.check("input[name=decision][value=approve]")
        page.check("input[name=override]")
        page.fill("textarea[name=comment]", "release 1 is our baseline")
        page.click("text=Record decision")
        assert "Approved the gate of run 1" in page.locator(".messages .success").inner_text()
        assert page.locator("#gates-waiting").inner_text() == "2"
        assert "standing" in page.locator("ul.decisions").inner_text()

        page.fill("textarea[name=reason]", "approved too early: wait for release 3")
        page.click("text=Revoke the decision")
        page.wait_for_url(RUN_DONE)
        assert (
            "Revoked the decision on the gate of run 1"
            in page.locator(".messages .success").inner_text()
        )
        decisions = page.locator("ul.decisions").inner_text()
        assert "revoked" in decisions
        assert "approved too early" in decisions
        assert page.locator("#gates-waiting").inner_text() == "3"
        page.goto(base + "/gates/")
        assert page.locator("table.pending-table tbody tr[data-run='1']").count() == 1
        audit = page.locator("table.audit-table").inner_text()
        assert "release 1 is our baseline" in audit


def test_a_runner_hides_a_scratch_run_and_starts_one_an_admin_made_room_for(
    browser: Any, user_folder: Path
) -> None:
    history(user_folder)
    adam = account(user_folder, "adam", "--approver")
    promoted = run_user(["oloproof", "project", "member", "default", "adam", "admin"], user_folder)
    assert promoted.returncode == 0, promoted.stderr
    rita = account(user_folder, "rita")

    with dashboard(user_folder, "serve") as base:  # with its worker
        with signed_in(browser, base, "rita", rita) as page:
            hide_the_scratch_run(page, base)
            page.goto(base + "/runs/new/")  # the form cannot run anything yet
            assert "No code root is registered yet" in page.locator("#code-roots").inner_text()
        with signed_in(browser, base, "adam", adam) as page:
            register_a_code_root_and_add_a_member(page, base, user_folder)
        with signed_in(browser, base, "rita", rita) as page:
            start_a_run_from_the_form(page, base, user_folder)


def hide_the_scratch_run(page: Any, base: str) -> None:
    """Run 4 tagged and hidden from its page: the history leaves it out unless asked, and
    its release's figure stays the release's own run."""
    page.goto(base + "/runs/4/")
    keeping = page.locator("#keeping")
    assert "Keeping this run" in keeping.inner_text()
    keeping.locator("input[name=tags]").fill("debug")
    keeping.locator("text=Save tags").click()
    assert "Tagged run 4: debug" in page.locator(".messages .success").inner_text()
    page.locator("#keeping").locator("text=Hide from the history").click()
    assert "Run 4 is hidden from the history" in page.locator(".messages .success").inner_text()
    assert "hidden from the history" in page.locator(".run-kept").inner_text()
    page.goto(base + "/")
    assert list(history_rows(page)) == [3, 2, 1]
    page.check("input[name=hidden]")
    page.click("form.filters button[type=submit]")
    page.wait_for_url(re.compile(r".*hidden=on.*"))
    rows = history_rows(page)
    assert list(rows) == [4, 3, 2, 1]
    assert "hidden" in rows[4]
    assert "debug" in rows[4]
    page.locator("table.runs-table tr[data-run='4'] a[href*='/systems/']").click()
    page.wait_for_url(re.compile(r".*/systems/\d+/$"))
    third = page.locator("table.releases-table tbody tr", has_text="@3")
    assert "#3" in third.inner_text()
    assert "#4" not in third.inner_text()
    assert "exact_label" in third.inner_text()


def register_a_code_root_and_add_a_member(page: Any, base: str, folder: Path) -> None:
    """A project admin registers the project's folder as a code root of `default`, makes
    a project and adds the runner to it, each change on the audit list."""
    page.click("#nav-settings")
    page.wait_for_url(re.compile(r".*/settings/$"))
    default = page.locator("table.projects-table tr[data-project='default']")
    assert "admin" in default.inner_text()
    default.locator("text=Members and code roots…").click()
    page.wait_for_url(re.compile(r".*/settings/projects/default/$"))
    page.fill("#root-add input[name=path]", str(folder))
    page.click("#root-add button[type=submit]")
    assert (
        f"default's runs may now use code from {folder}"
        in page.locator(".messages .success").inner_text()
    )
    assert page.locator(f"table.roots-table tr[data-root='{folder}']").count() == 1

    page.goto(base + "/settings/")
    page.fill("#project-create input[name=slug]", "support-team")
    page.click("#project-create button[type=submit]")
    page.wait_for_url(re.compile(r".*/settings/projects/support-team/$"))
    page.fill("#member-add input[name=username]", "rita")
    page.select_option("#member-add select[name=role]", "runner")
    page.click("#member-add button[type=submit]")
    assert "rita is runner in support-team" in page.locator(".messages .success").inner_text()
    member = page.locator("table.members-table tr[data-member='rita']")
    assert member.get_attribute("data-role") == "runner"
    page.goto(base + "/gates/")
    changes = page.locator("#changes").inner_text()
    assert str(folder) in changes
    assert "rita" in changes


def start_a_run_from_the_form(page: Any, base: str, folder: Path) -> None:
    """The New-run form with the keys of the project's oloproof.yaml: the run is queued,
    listed in the history and run by the worker `oloproof serve` started."""
    page.locator("header.topbar nav a", has_text="New run").click()
    page.wait_for_url(re.compile(r".*/runs/new/$"))
    assert str(folder) in page.locator("#code-roots").inner_text()
    fill_run_form(page, folder)
    # A member of two projects says which one the run belongs to.
    page.select_option("form.guided select[name=project]", "default")
    page.click("button[type=submit].primary")
    page.wait_for_url(re.compile(r".*/runs/5/$"))
    assert "Run 5 submitted" in page.locator(".messages .success").inner_text()
    page.goto(base + "/")
    row = page.locator("table.runs-table tr[data-run='5']")
    assert row.locator("[data-status-of='5']").inner_text() in ("queued", "running", "succeeded")
    assert "support-bot" in row.inner_text()
    page.goto(base + "/runs/5/")
    page.wait_for_selector("[data-status-of='5'].status-succeeded", timeout=180_000)
    assert "exact_label" in page.locator("main").inner_text()


def test_a_viewer_reads_the_history_but_may_neither_run_nor_decide(
    browser: Any, user_folder: Path
) -> None:
    history(user_folder)
    vera = account(user_folder, "vera", "--viewer")

    with dashboard(user_folder) as base, signed_in(browser, base, "vera", vera) as page:
        assert list(history_rows(page)) == [4, 3, 2, 1]
        assert "New run" not in nav(page)
        assert page.locator(".page-head a", has_text="New run").count() == 0
        assert page.locator("#gates-waiting").count() == 0

        page.goto(base + "/gates/")
        pending = page.locator("#pending").inner_text()
        assert "deciding them needs the approver role" in pending
        assert page.locator("table.pending-table tbody tr[data-run]").count() == 3
        assert page.locator("table.pending-table a.button", has_text="Decide…").count() == 0

        page.goto(base + "/runs/1/")
        gate = page.locator("#gate").inner_text()
        assert "Deciding a gate needs the approver role in project default" in gate
        assert page.locator("text=Record decision").count() == 0
        assert page.locator("#keeping").count() == 0
        refused = post_form(
            page, base, "/runs/1/decide", {"decision": "approve", "comment": "looks fine"}
        )
        assert refused.status == 403
        page.goto(base + "/runs/1/")
        assert "No decision yet." in page.locator("#gate").inner_text()
