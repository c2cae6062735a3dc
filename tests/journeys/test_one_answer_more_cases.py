"""One answer to "how many more cases?" for one undecided gate, on every face.

The README's project in a folder outside the repository, its first `oloproof run` (the
gate is inconclusive: 40 cases cannot tell whether exact_label clears 0.9), then what a
person reads of that gate: the run's own output, `oloproof gate`, `oloproof plan`, and
in headless Chromium the run page (summary, rule, planning box) and the gate badge's
tooltip on the history and the approvals pages. Each says the same number of cases for
the same question: how many cases in all give the rule an 80 % chance of passing.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from tests.journeys.conftest import run_user
from tests.journeys.test_approvals import account, dashboard, first_run, signed_in

pytestmark = [pytest.mark.browser, pytest.mark.slow]

RULE = "exact_label ≥ 0.9"
SAID = re.compile(
    rf"{RULE} inconclusive \(interval [^;]+; "
    r"about ([\d,]+) cases in all for an 80 % chance of passing\)"
)


def figure(pattern: re.Pattern[str], text: str) -> int:
    found = pattern.search(" ".join(text.split()))
    assert found, text
    return int(found.group(1).replace(",", ""))


def test_the_gate_the_command_the_plan_and_the_pages_say_one_number(
    browser: Any, user_folder: Path
) -> None:
    ran = first_run(user_folder)
    said = figure(SAID, ran.stdout + ran.stderr)

    gated = run_user(["oloproof", "gate", "1", "release.yaml"], user_folder)
    assert gated.returncode == 2, gated.stdout + gated.stderr
    assert figure(SAID, gated.stdout) == said
    reason = re.compile(r"about ([\d,]+) cases in all give it an 80 % chance of passing")
    assert figure(reason, gated.stdout) == said
    assert "more cases needed" not in gated.stdout
    assert "would decide it" not in gated.stdout

    planned = run_user(["oloproof", "plan", "release.yaml", "--result", "1"], user_folder)
    assert planned.returncode == 0, planned.stderr
    assert figure(re.compile(rf"{RULE}: ([\d,]+) cases"), planned.stdout) == said

    alice = account(user_folder, "alice", "--approver")
    with dashboard(user_folder) as base, signed_in(browser, base, "alice", alice) as page:
        page.goto(base + "/runs/1/")
        assert figure(SAID, page.locator("p.gate-summary").inner_text()) == said
        rule = page.locator(".rule-more").first.inner_text()
        assert figure(re.compile(r"^About ([\d,]+) cases in all \(this run has 30\)"), rule) == said
        box = page.locator("p.gate-plan").inner_text()
        assert figure(re.compile(r"With about ([\d,]+) cases in all"), box) == said
        assert "more cases needed" not in page.content()
        for listing in ("/", "/gates/"):  # the history, the approvals
            page.goto(base + listing)
            badge = page.locator("tr[data-run='1'] .badge.gate-inconclusive").first
            assert figure(SAID, badge.get_attribute("title") or "") == said
