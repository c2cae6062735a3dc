"""Release gates and approvals, the way the README sets them up, in real headless Chromium.

A project folder outside the repository with the README's files (its system, a run config
and the release.yaml of "Gates and comparisons"), `oloproof run` and `oloproof user
create` as the user types them, then the dashboard `oloproof serve` serves on that store:
the approvals queue, the links each role gets, four eyes, and a first release under
`baseline: {last_approved: true}`.
"""

from __future__ import annotations

import re
import signal
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from contextlib import closing, contextmanager
from pathlib import Path
from typing import Any

import pytest

from tests.journeys.conftest import readme_block, run_user, user_env
from tests.support.platform import free_port, server_ready, wait_until

pytestmark = [pytest.mark.browser, pytest.mark.slow]

RUN_CONFIG = """\
system: bot.py:answer
dataset: data/example.jsonl
evaluators:
  - ExactMatch: {criterion: exact_label, field: label}
policy: release.yaml
"""
FIRST_RELEASE_WAITS = "exact_label vs baseline ≥ −0.02 inconclusive (no approved support-bot run"


def readme_project(folder: Path) -> None:
    """The README's system (its first example, up to the call), a run config naming the
    README's release.yaml, and that release.yaml as the README shows it."""
    system = readme_block("In 30 seconds").split("\n\nresult = evaluate(")[0]
    assert "@system(" in system
    (folder / "bot.py").write_text(system + "\n", encoding="utf-8")
    (folder / "oloproof.yaml").write_text(RUN_CONFIG, encoding="utf-8")
    policy = readme_block("Gates and comparisons", 0, "yaml")
    assert "baseline: {last_approved: true}" in policy
    (folder / "release.yaml").write_text(policy, encoding="utf-8")


def first_run(folder: Path) -> subprocess.CompletedProcess[str]:
    readme_project(folder)
    done = run_user(["oloproof", "run", "oloproof.yaml"], folder)
    assert done.returncode == 2, done.stdout + done.stderr  # inconclusive, not an error
    return done


def account(folder: Path, name: str, *role: str) -> str:
    """`oloproof user create NAME [--approver|--viewer]`; the password it prints once."""
    done = run_user(["oloproof", "user", "create", name, *role], folder)
    assert done.returncode == 0, done.stderr
    found = re.search(rf"login\s+{name} / (\S+)", done.stdout)
    assert found, done.stdout
    return found.group(1)


@contextmanager
def dashboard(folder: Path, *command: str, **extra_env: str) -> Iterator[str]:
    """`oloproof serve` (or `command`) in the project's folder, with `extra_env` in its
    environment (and its worker's); its address."""
    port = free_port()
    args = list(command or ("serve", "--no-worker"))
    # What the server and its worker say is kept beside the folder, and shown when the
    # test fails: a run that never finishes is otherwise a timeout with no reason.
    said = folder.parent / f"serve-{port}.log"
    with open(said, "wb") as log:
        server = subprocess.Popen(
            [str(Path(sys.executable).parent / "oloproof"), *args, f"--port={port}"],
            cwd=folder,
            env=user_env(**extra_env),
            stdout=log,
            stderr=subprocess.STDOUT,
        )
    try:
        wait_until(lambda: server_ready(port), timeout=120, what="the dashboard to serve")
        yield f"http://127.0.0.1:{port}"
    except BaseException:
        print(f"--- oloproof {' '.join(args)} said (last 4,000 characters):")
        print(said.read_text(encoding="utf-8", errors="replace")[-4000:])
        raise
    finally:
        server.send_signal(signal.SIGTERM)  # serve stops the worker it started, too
        try:
            server.wait(timeout=60)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()


@contextmanager
def signed_in(browser: Any, base: str, username: str, password: str) -> Iterator[Any]:
    context = browser.new_context(viewport={"width": 1360, "height": 900})
    page = context.new_page()
    page.set_default_timeout(20_000)
    page.goto(base + "/accounts/login/")
    page.fill("input[name=username]", username)
    page.fill("input[name=password]", password)
    page.click("button[type=submit]")
    page.wait_for_url(re.compile(r".*/$"))
    try:
        yield page
    finally:
        context.close()


def nav(page: Any) -> str:
    return str(page.locator("header.topbar nav").inner_text())


def post_form(page: Any, base: str, path: str, form: dict[str, str]) -> Any:
    """A form post from this session, with its CSRF token (what a crafted page would do)."""
    csrf = next(c["value"] for c in page.context.cookies() if c["name"] == "csrftoken")
    return page.request.post(
        base + path, form=form, headers={"X-CSRFToken": csrf, "Referer": base + "/"}
    )


def fill_run_form(page: Any, folder: Path) -> None:
    """The New-run form with the keys of the project's oloproof.yaml."""
    page.fill("input[name=base_dir]", str(folder))
    page.fill("input[name=system]", "bot.py:answer")
    page.fill("input[name=dataset]", "data/example.jsonl")
    page.fill("textarea[name=evaluators]", "ExactMatch: {criterion: exact_label, field: label}")
    page.fill("input[name=policy]", "release.yaml")


def test_an_approver_finds_the_run_in_the_queue_with_its_count_and_approves_it(
    browser: Any, user_folder: Path
) -> None:
    first_run(user_folder)
    alice = account(user_folder, "alice", "--approver")
    vera = account(user_folder, "vera", "--viewer")

    with dashboard(user_folder) as base:
        with signed_in(browser, base, "alice", alice) as page:
            assert page.locator("#gates-waiting").inner_text() == "1"
            page.click("header.topbar nav a[href='/gates/']")
            page.wait_for_url(re.compile(r".*/gates/$"))
            assert "1 gate waits for your decision" in page.locator("#waiting-for-you").inner_text()
            row = page.locator("table.pending-table tbody tr[data-run='1']")
            assert "support-bot" in row.inner_text()
            row.locator("a.button", has_text="Decide…").click()
            page.wait_for_url(re.compile(r".*/runs/1/#gate$"))
            page.check("input[name=decision][value=approve]")
            page.check("input[name=override]")
            page.fill("textarea[name=comment]", "first release: nothing to compare with yet")
            page.click("text=Record decision")
            assert "Approved the gate of run 1" in page.locator(".messages .success").inner_text()
            assert page.locator("#gates-waiting").count() == 0
            page.goto(base + "/gates/")
            assert (
                "No gate is waiting for a decision."
                in page.locator("table.pending-table").inner_text()
            )
            assert "first release" in page.locator("table.audit-table").inner_text()
        with signed_in(browser, base, "vera", vera) as page:
            assert page.locator("#gates-waiting").count() == 0
            assert "New run" not in nav(page)
            assert page.locator(".account .tag").count() == 0


def test_the_demo_approver_sees_new_run_the_approver_tag_and_the_waiting_gates(
    browser: Any, tmp_path: Path
) -> None:
    folder = tmp_path / "demo"
    folder.mkdir()
    with dashboard(folder, "demo") as base:
        with signed_in(browser, base, "demo", "oloproof-demo") as page:
            assert page.locator(".account .tag").inner_text() == "approver"
            assert "New run" in nav(page)
            waiting = int(page.locator("#gates-waiting").inner_text())
            assert waiting >= 1
            page.goto(base + "/optimizations/")
            assert page.locator("a.button", has_text="New optimization").is_visible()
            page.goto(base + "/gates/")
            assert page.locator("table.pending-table a.button").count() == waiting
        with signed_in(browser, base, "viewer", "oloproof-viewer") as page:
            assert "New run" not in nav(page)
            assert page.locator("#gates-waiting").count() == 0


def test_an_approver_made_on_the_command_line_queues_a_run_once_told_how_to_register_code(
    browser: Any, user_folder: Path
) -> None:
    first_run(user_folder)
    alice = account(user_folder, "alice", "--approver")

    with dashboard(user_folder) as base, signed_in(browser, base, "alice", alice) as page:
        assert page.locator(".account .tag").inner_text() == "approver"
        page.locator("header.topbar nav a", has_text="New run").click()
        page.wait_for_url(re.compile(r".*/runs/new/$"))
        assert "No code root is registered yet" in page.locator("#code-roots").inner_text()
        fill_run_form(page, user_folder)
        page.click("button[type=submit].primary")
        error = page.locator("form.guided .error").inner_text()
        command = re.search(r"`(oloproof project root \S+ \S+)`", error)
        assert command, error
        assert command.group(1) == f"oloproof project root default {user_folder}"

        registered = run_user(command.group(1).split(), user_folder)
        assert registered.returncode == 0, registered.stderr

        page.click("button[type=submit].primary")  # what was typed is still there
        page.wait_for_url(re.compile(r".*/runs/2/$"))
        assert "Run 2 submitted" in page.locator(".messages .success").inner_text()


def test_the_submitter_of_a_run_cannot_revoke_another_approvers_rejection_of_it(
    browser: Any, user_folder: Path
) -> None:
    first_run(user_folder)
    alice = account(user_folder, "alice", "--approver")
    carol = account(user_folder, "carol", "--approver")
    registered = run_user(["oloproof", "project", "root", "default", "."], user_folder)
    assert registered.returncode == 0, registered.stderr

    with dashboard(user_folder, "serve") as base:  # with its worker
        with signed_in(browser, base, "carol", carol) as page:
            page.goto(base + "/runs/new/")
            fill_run_form(page, user_folder)
            page.click("button[type=submit].primary")
            page.wait_for_url(re.compile(r".*/runs/2/$"))
            page.wait_for_selector("#gate .badge.gate-inconclusive", timeout=120_000)
            # Her own run waits for another approver, not for her.
            assert page.locator("#four-eyes").is_visible()
            assert page.locator("text=Record decision").count() == 0
            assert page.locator("#gates-waiting").inner_text() == "1"  # run 1 only
        with signed_in(browser, base, "alice", alice) as page:
            assert page.locator("#gates-waiting").inner_text() == "2"
            page.goto(base + "/runs/2/")
            page.check("input[name=decision][value=reject]")
            page.fill("textarea[name=comment]", "too few cases to ship")
            page.click("text=Record decision")
            assert "Rejected the gate of run 2" in page.locator(".messages .success").inner_text()
        with signed_in(browser, base, "carol", carol) as page:
            page.goto(base + "/runs/2/")
            assert page.locator("text=Revoke the decision").count() == 0
            assert "another approver revokes" in page.locator("#four-eyes").inner_text()
            refused = post_form(page, base, "/runs/2/revoke", {"reason": "I disagree"})
            assert refused.status == 403
            assert "run 2 was submitted by you; another approver must revoke" in refused.text()
            page.goto(base + "/runs/2/")
            decisions = page.locator("ul.decisions").inner_text()
            assert "standing" in decisions
            assert "revoked" not in decisions
            assert page.locator("#gates-waiting").inner_text() == "1"


def runs_recorded(folder: Path) -> list[tuple[int, str]]:
    """The runs in the project's store, read only."""
    store = folder / ".oloproof" / "oloproof.sqlite3"
    with closing(sqlite3.connect(f"file:{store}?mode=ro", uri=True)) as db:
        return list(db.execute("SELECT id, status FROM runs_run ORDER BY id"))


def test_the_readme_policy_on_a_first_run_is_inconclusive_and_a_missing_baseline_runs_nothing(
    browser: Any, user_folder: Path
) -> None:
    done = first_run(user_folder)
    assert FIRST_RELEASE_WAITS in done.stdout
    assert "error" not in done.stderr
    assert runs_recorded(user_folder) == [(1, "succeeded")]

    # A baseline that cannot be there is refused before any case is spent on it.
    for baseline, refusal in (
        ('{release: "support-bot@9"}', "baseline.release: no recorded run of support-bot@9"),
        ("{run: v0.json}", "baseline.run: cannot load the baseline"),
    ):
        policy = (user_folder / "release.yaml").read_text(encoding="utf-8")
        (user_folder / "other.yaml").write_text(
            policy.replace("{last_approved: true}", baseline), encoding="utf-8"
        )
        (user_folder / "other-run.yaml").write_text(
            RUN_CONFIG.replace("release.yaml", "other.yaml"), encoding="utf-8"
        )
        refused = run_user(["oloproof", "run", "other-run.yaml"], user_folder)
        assert refused.returncode == 3, refused.stdout + refused.stderr
        assert refusal in refused.stderr
        assert runs_recorded(user_folder) == [(1, "succeeded")]

    alice = account(user_folder, "alice", "--approver")
    with dashboard(user_folder) as base, signed_in(browser, base, "alice", alice) as page:
        page.goto(base + "/runs/1/")
        rules = page.locator("#gate").inner_text()
        assert "there is no approved run of support-bot to compare with yet" in rules
        assert "so this rule cannot be decided until one is approved" in rules
        assert "evaluated without a policy" not in rules


def test_a_run_whose_policy_fails_it_reads_as_failed_not_as_ungated(
    browser: Any, user_folder: Path
) -> None:
    readme_project(user_folder)
    policy = (user_folder / "release.yaml").read_text(encoding="utf-8")
    (user_folder / "release.yaml").write_text(
        policy.replace(
            "- metric: exact_label\n    min: 0.9", "- metric: exact_lable\n    min: 0.9"
        ),
        encoding="utf-8",
    )
    done = run_user(["oloproof", "run", "oloproof.yaml"], user_folder)
    assert done.returncode == 3, done.stdout + done.stderr
    assert "unknown metric 'exact_lable'" in done.stderr
    assert runs_recorded(user_folder) == [(1, "failed")]
    alice = account(user_folder, "alice", "--approver")

    with dashboard(user_folder) as base, signed_in(browser, base, "alice", alice) as page:
        page.goto(base + "/runs/1/")
        assert (
            "It stopped after 30 of 30 cases, before its conclusion"
            in page.locator(".error-card").inner_text()
        )
        assert "cases run before it failed" in page.locator(".summary-grid").text_content()
        assert (
            "The run failed before its policy decided the gate"
            in page.locator("#no-gate").inner_text()
        )
        assert page.locator(".head-badges .gate-none").inner_text() == "not decided"
        provenance = page.locator("dl.provenance").inner_text()
        assert "not recorded: the run failed before its conclusion" in provenance
        assert "recorded when the run finishes" not in provenance
        page.goto(base + "/")
        assert "not decided" in page.locator("table.runs-table").inner_text()


def test_the_demo_says_where_to_look_first_and_each_place_holds_what_it_says(
    browser: Any, tmp_path: Path
) -> None:
    folder = tmp_path / "demo"
    folder.mkdir()
    done = run_user(["oloproof", "demo", "--no-serve", "--port=8000"], folder, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    story = done.stdout.split("where to look first", 1)[1]
    decide = re.search(r"decide\s+\S+ \(run (\d+)\) .*waits for an approver: (\S+)", story)
    failed = re.search(r"failed\s+\S+ \(run (\d+)\): gate failed on (.+?); its cases: (\S+)", story)
    compare = re.search(r"compare\s+.* with .*: (\S+)", story)
    assert decide, story
    assert failed, story
    assert compare, story
    assert "missing" in failed.group(2)
    assert "baseline  support-bot@1.0 (run 1), approved" in story

    local = "http://127.0.0.1:8000"
    with dashboard(folder) as base, signed_in(browser, base, "demo", "oloproof-demo") as page:
        page.goto(decide.group(2).replace(local, base))
        assert f"#{decide.group(1)}" in page.locator("table.pending-table").inner_text()
        page.goto(failed.group(3).replace(local, base))
        assert "missing" in page.locator("main").inner_text().lower()
        page.goto(compare.group(1).replace(local, base))
        compared = page.locator("main").inner_text()
        assert "1.0" in compared
        assert "2.0" in compared
