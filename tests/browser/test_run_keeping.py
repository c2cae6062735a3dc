"""A run's keeping on its page in a real browser: a runner names, tags and hides a
debugging run (the history leaves it out until asked), deletes it (on the audit list),
and is told plainly why an approved run cannot be deleted."""

from __future__ import annotations

import io
import re
from typing import Any

import pytest

from oloproof.cli import main
from runs.models import Run
from runs.services import approval_create
from tests.browser.conftest import PASSWORD, Visit
from tests.runs.conftest import member, record_evaluation

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

POLICY: dict[str, Any] = {"version": 1, "rules": [{"metric": "exact_label", "min": 0.5}]}


def runner(monkeypatch: pytest.MonkeyPatch, name: str) -> None:
    """An account made as users make them: `oloproof user create` (a runner)."""
    monkeypatch.setattr("sys.stdin", io.StringIO(PASSWORD + "\n"))
    assert main(["user", "create", name, "--password-stdin"]) == 0


def history_ids(visit: Visit, query: str = "") -> list[int]:
    visit.go("/" + query)
    links = visit.page.locator("table.runs-table tbody tr td:nth-child(2) > a[href^='/runs/']")
    return [
        int(re.findall(r"\d+", href)[0])
        for href in links.evaluate_all("l => l.map(a => a.getAttribute('href'))")
    ]


def submit(visit: Visit, form: str) -> str:
    visit.page.click(f"{form} button[type=submit]")
    visit.page.wait_for_load_state("load")
    return visit.page.locator(".messages").inner_text()


def test_a_runner_names_tags_hides_and_deletes_a_debugging_run(
    visit: Visit, monkeypatch: pytest.MonkeyPatch
) -> None:
    approved = Run.objects.get(pk=int(record_evaluation(20, version="1", policy=POLICY).run_id))
    approval_create(
        run=approved, user=member("alice", "approver"), decision="approve", comment="ships"
    )
    scratch = Run.objects.get(pk=int(record_evaluation(20, version="1").run_id))
    runner(monkeypatch, "rita")
    visit.login("rita")
    page = visit.page
    assert history_ids(visit) == [scratch.pk, approved.pk]

    visit.go(f"/runs/{scratch.pk}/")
    page.fill("#run-rename input[name=name]", "parser debugging")
    assert f"Named run {scratch.pk}." in submit(visit, "#run-rename")
    page.fill("#run-tags input[name=tags]", "debug, parser")
    submit(visit, "#run-tags")
    assert page.locator(".run-kept").inner_text().split() == [
        "parser",
        "debugging",
        "debug",
        "parser",
    ]
    assert "hidden from the history" in submit(visit, "#run-hide")

    assert history_ids(visit) == [approved.pk]
    assert history_ids(visit, "?hidden=on") == [scratch.pk, approved.pk]
    assert history_ids(visit, "?hidden=on&tag=debug") == [scratch.pk]
    assert "parser debugging" in page.locator("table.runs-table").inner_text()

    visit.go(f"/runs/{approved.pk}/")
    assert "cannot be deleted, only hidden" in page.locator("#run-delete").inner_text()
    page.check("#run-delete input[name=sure]")
    said = submit(visit, "#run-delete")
    assert "has an approval decision" in said
    assert "hide it instead" in said
    assert Run.objects.filter(pk=approved.pk).exists()

    visit.go(f"/runs/{scratch.pk}/")
    page.check("#run-delete input[name=sure]")
    assert f"Deleted run #{scratch.pk} of support-bot@1." in submit(visit, "#run-delete")
    assert history_ids(visit, "?hidden=on") == [approved.pk]
    assert visit.go(f"/runs/{scratch.pk}/").status == 404
    visit.go("/gates/")
    deleted = page.locator("table.changes-table tr[data-action='run.delete']")
    assert "rita" in deleted.inner_text()
    assert f"run #{scratch.pk}" in deleted.inner_text()
