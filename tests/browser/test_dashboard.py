"""The dashboard in a real browser: sign in, browse, open a run and a case, compare, decide."""

from __future__ import annotations

import re
from typing import Any

import pytest
from django.contrib.auth.models import User

from runs.models import Approval, Run
from tests.browser.conftest import Visit
from tests.runs.conftest import member, record_evaluation

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

POLICY: dict[str, Any] = {"version": 1, "rules": [{"metric": "exact_label", "min": 0.9}]}


def make_user(username: str, role: str = "viewer") -> User:
    """A member of the default project with `role`."""
    return member(username, role)


def recorded(version: str, **kwargs: Any) -> Run:
    return Run.objects.get(pk=int(record_evaluation(20, version=version, **kwargs).run_id))


@pytest.fixture
def releases() -> tuple[Run, Run]:
    return recorded("1", policy=POLICY), recorded("2", wrong_every=4, policy=POLICY)


def test_sign_in_browse_runs_open_a_run_and_a_case(visit: Visit, releases) -> None:
    _first, second = releases
    make_user("carol")
    visit.go("/")
    assert "/accounts/login/" in visit.page.url
    visit.login("carol")
    page = visit.page
    assert page.locator("table.runs-table tbody tr").count() == 2
    page.select_option("select[name=release]", "2")
    page.click("form.filters button[type=submit]")
    page.wait_for_url(re.compile(r".*release=2.*"))
    assert page.locator("table.runs-table tbody tr").count() == 1
    page.click(f"a[href='/runs/{second.pk}/']")
    page.wait_for_url(re.compile(rf".*/runs/{second.pk}/$"))
    assert page.locator("#run-chart .main-svg").count() >= 1, "the Plotly chart did not draw"
    assert page.locator("#gate .badge.gate-inconclusive").first.is_visible()
    page.click("a.button[href$='?outcome=failed']")
    page.wait_for_url(re.compile(r".*outcome=failed.*"))
    assert page.locator("table.cases-table tbody tr").count() == 5
    page.click("table.cases-table tbody tr >> nth=0 >> a")
    page.wait_for_url(re.compile(r".*/cases/case_\d+$"))
    assert page.locator("h1.case-title").inner_text().startswith("case_")
    assert page.locator("text=Verdicts").is_visible()
    assert "failed" in page.locator(".head-badges").inner_text()
    assert visit.dialogs == []


def test_compare_two_releases(visit: Visit, releases) -> None:
    first, second = releases
    make_user("carol")
    visit.login("carol")
    visit.go("/compare/")
    page = visit.page
    page.select_option("select[name=baseline]", str(first.pk))
    page.select_option("select[name=candidate]", str(second.pk))
    page.click("form.filters button[type=submit]")
    page.wait_for_url(re.compile(r".*/compare/\?.*"))
    assert page.locator("#compare-chart .main-svg").count() >= 1
    assert page.locator("text=Regressed (5)").is_visible()
    page.click(f"a[href='/runs/{second.pk}/cases/case_00001']")
    page.wait_for_url(re.compile(rf".*/runs/{second.pk}/cases/case_00001$"))
    assert "failed" in page.locator(".head-badges").inner_text()


def test_an_approver_approves_a_gate_with_an_override(visit: Visit, releases) -> None:
    _, failing = releases
    make_user("alice", "approver")
    visit.login("alice")
    visit.go("/gates/")
    page = visit.page
    page.click(f"a[href='/runs/{failing.pk}/#gate']")
    page.check("input[name=decision][value=approve]")
    page.fill("textarea[name=comment]", "known label drift, accepted for this release")
    page.click("text=Record decision")
    assert page.locator(".messages .error").inner_text() == (
        "This gate is inconclusive; tick 'Override' to approve it anyway, and say why."
    )
    assert Approval.objects.count() == 0
    # What was typed and chosen is still there: only the tick is missing.
    assert page.input_value("textarea[name=comment]") == (
        "known label drift, accepted for this release"
    )
    assert page.is_checked("input[name=decision][value=approve]")
    page.check("input[name=override]")
    page.click("text=Record decision")
    assert "Approved the gate" in page.locator(".messages .success").inner_text()
    approval = Approval.objects.get()
    assert approval.gate.run_id == failing.pk
    assert approval.override
    assert approval.user.username == "alice"
    decisions = page.locator("ul.decisions").inner_text()
    assert "alice" in decisions
    assert "override" in decisions
    visit.go("/gates/")
    assert "known label drift" in page.locator("table.audit-table").inner_text()


def test_a_non_approver_is_refused(visit: Visit, releases) -> None:
    first, _ = releases
    make_user("bob", "runner")
    visit.login("bob")
    visit.go(f"/runs/{first.pk}/")
    page = visit.page
    assert page.locator("text=Record decision").count() == 0
    assert page.locator("text=needs the approver role").is_visible()
    # Posting the form anyway (with a valid CSRF token from this session) is refused.
    token = page.context.cookies()
    csrf = next(cookie["value"] for cookie in token if cookie["name"] == "csrftoken")
    response = page.request.post(
        f"{visit.base_url}/runs/{first.pk}/decide",
        form={"decision": "approve", "comment": "sneaky"},
        headers={"X-CSRFToken": csrf, "Referer": visit.base_url + "/"},
    )
    assert response.status == 403
    assert Approval.objects.count() == 0
