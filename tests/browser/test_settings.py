"""Settings pages in a real browser: a project admin makes a project, an account, gives it
a role and takes it away, registers a code root, resets a password, disables an account
and makes and revokes an API token; every change is on the audit list. A runner gets
only their own tokens."""

from __future__ import annotations

import io
import re
from pathlib import Path
from typing import Any

import pytest

from oloproof.cli import main
from tests.browser.conftest import PASSWORD, Visit

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def oloproof(monkeypatch: pytest.MonkeyPatch, *args: str, stdin: str = "") -> None:
    """The `oloproof` command as a user runs it where the store is."""
    monkeypatch.setattr("sys.stdin", io.StringIO(stdin))
    assert main(list(args)) == 0, args


def account(monkeypatch: pytest.MonkeyPatch, name: str, *role: str) -> None:
    oloproof(monkeypatch, "user", "create", name, *role, "--password-stdin", stdin=PASSWORD + "\n")


def signs_in(visit: Visit, browser: Any, username: str, password: str) -> bool:
    """Whether `username` gets past the sign-in page with `password`, in a fresh tab."""
    context = browser.new_context()
    page = context.new_page()
    page.goto(visit.base_url + "/accounts/login/")
    page.fill("input[name=username]", username)
    page.fill("input[name=password]", password)
    page.click("button[type=submit]")
    page.wait_for_load_state("load")
    inside = "/accounts/login/" not in page.url
    context.close()
    return inside


def row(page: Any, table: str, key: str, value: str) -> Any:
    return page.locator(f"table.{table} tr[data-{key}='{value}']")


def test_a_project_admin_manages_a_project_its_members_roots_and_accounts(
    visit: Visit, browser: Any, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    account(monkeypatch, "ann")
    oloproof(monkeypatch, "project", "member", "default", "ann", "admin")
    visit.login("ann")
    page = visit.page
    page.click("#nav-settings")
    assert row(page, "projects-table", "project", "default").inner_text().count("admin") == 1

    page.fill("#project-create input[name=slug]", "support-bot")
    page.fill("#project-create input[name=name]", "Support bot")
    page.click("#project-create button[type=submit]")
    page.wait_for_url(re.compile(r".*/settings/projects/support-bot/$"))
    assert row(page, "members-table", "member", "ann").get_attribute("data-role") == "admin"

    visit.go("/settings/accounts/")
    page.fill("#account-create input[name=username]", "ben")
    page.select_option("#account-create select[name=project]", "support-bot")
    page.select_option("#account-create select[name=role]", "runner")
    page.click("#account-create button[type=submit]")
    first_password = page.locator("#new-password .secret-value").inner_text()
    assert "support-bot" in row(page, "accounts-table", "account", "ben").inner_text()
    assert signs_in(visit, browser, "ben", first_password)

    visit.go("/settings/projects/support-bot/")
    ben = row(page, "members-table", "member", "ben")
    ben.locator("select[name=role]").select_option("approver")
    ben.locator("form.role-change button").click()
    page.wait_for_load_state("load")
    assert "ben is approver in support-bot." in page.locator(".messages").inner_text()
    assert row(page, "members-table", "member", "ben").get_attribute("data-role") == "approver"
    # The last admin stays: the project would have no one to manage it.
    ann = row(page, "members-table", "member", "ann")
    ann.locator("form.member-remove button").click()
    page.wait_for_load_state("load")
    assert "only admin" in page.locator(".messages").inner_text()

    page.fill("#root-add input[name=path]", str(tmp_path))
    page.click("#root-add button[type=submit]")
    page.wait_for_load_state("load")
    assert row(page, "roots-table", "root", str(tmp_path.resolve())).count() == 1
    row(page, "roots-table", "root", str(tmp_path.resolve())).locator("button").click()
    page.wait_for_load_state("load")
    assert page.locator("table.roots-table tr[data-root]").count() == 0

    visit.go("/settings/accounts/")
    row(page, "accounts-table", "account", "ben").locator("form.account-password button").click()
    page.wait_for_load_state("load")
    second_password = page.locator("#new-password .secret-value").inner_text()
    assert second_password != first_password
    assert not signs_in(visit, browser, "ben", first_password)
    assert signs_in(visit, browser, "ben", second_password)
    row(page, "accounts-table", "account", "ben").locator("form.account-active button").click()
    page.wait_for_load_state("load")
    assert "disabled" in row(page, "accounts-table", "account", "ben").inner_text()
    assert not signs_in(visit, browser, "ben", second_password)

    visit.go("/settings/projects/support-bot/")
    row(page, "members-table", "member", "ben").locator("form.member-remove button").click()
    page.wait_for_load_state("load")
    assert row(page, "members-table", "member", "ben").count() == 0

    visit.go("/gates/")
    changes = page.locator("table.changes-table tbody").inner_text()
    for said in (
        "project made",
        "account made",
        "member's role set",
        "member removed",
        "code root registered",
        "code root removed",
        "new password",
        "account disabled",
    ):
        assert said in changes, said


def test_an_api_token_is_shown_once_works_and_stops_when_revoked(
    visit: Visit, browser: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    account(monkeypatch, "rita")
    visit.login("rita")
    page = visit.page
    page.click("#nav-settings")
    page.wait_for_url(re.compile(r".*/settings/tokens/$"))
    assert page.locator(".settings-nav").inner_text().split() == ["Projects", "API", "tokens"]
    page.fill("#token-create input[name=name]", "ci")
    page.select_option("#token-create select[name=project]", "default")
    page.click("#token-create button[type=submit]")
    token = page.locator("#new-token .secret-value").inner_text()
    assert token.startswith("olo_")
    elsewhere = browser.new_context()  # a client with the token only, no session
    api = elsewhere.request
    headers = {"Authorization": f"Bearer {token}"}
    assert api.get(visit.base_url + "/api/runs", headers=headers).status == 200

    visit.go("/settings/tokens/")
    assert page.locator("#new-token").count() == 0  # shown only once
    row(page, "tokens-table", "token", token[:12]).locator("button").click()
    page.wait_for_load_state("load")
    assert "revoked" in row(page, "tokens-table", "token", token[:12]).inner_text()
    assert api.get(visit.base_url + "/api/runs", headers=headers).status == 401
    elsewhere.close()

    # A runner manages no project and no account.
    assert visit.go("/settings/projects/default/").status == 403
    assert visit.go("/settings/accounts/").status == 200
    assert page.locator("table.accounts-table tr[data-account]").count() == 0
    visit.go("/gates/")
    assert "API token made" in page.locator("table.changes-table").inner_text()
