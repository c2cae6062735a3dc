"""The run page in real Chromium follows a run on a real worker case by case, without a
reload, from the moment it is queued (status, release and policy shown), and reloads
once when the run finishes."""

from __future__ import annotations

import re
import time
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.browser.conftest import PASSWORD
from tests.support.platform import (
    free_port,
    platform,
    redis_flush,
    redis_url,
    server_ready,
    wait_until,
    write_project,
)

pytestmark = [pytest.mark.browser, pytest.mark.redis]

REDIS_DB = 15
N_CASES = 24

SETUP = """
from django.contrib.auth.models import User
from django.core.management import call_command
from runs.access import LOCAL
from runs.writers.projects import code_root_register, membership_set, project_default_ensure

call_command("migrate", interactive=False, verbosity=0)
project = project_default_ensure()
code_root_register(by=LOCAL, project=project, path={root!r})
user = User.objects.create_user("carol", password={password!r})
membership_set(by=LOCAL, project=project, user=user, role="runner")
"""

COUNTER = """() => window.sameDocument
    ? document.querySelector("#progress [data-progress-of]").textContent
    : null"""


def counts_until_reload(page: Any, *, timeout: float = 120) -> list[str]:
    """The page's counter every 0.1 s while the document stays the same one."""
    seen: list[str] = []
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            text = page.evaluate(COUNTER)
        except Exception:  # the page is reloading: its context went away
            return seen
        if text is None:
            return seen
        seen.append(text)
        time.sleep(0.1)
    raise AssertionError(f"the page never reloaded; counter went {seen}")


def test_the_run_page_counts_cases_as_a_worker_finishes_them(browser: Any, tmp_path: Path) -> None:
    redis_flush(6379, REDIS_DB)
    config = write_project(tmp_path / "project", n_cases=N_CASES, sleep_ms=200, concurrency=1)
    policy = {"version": 1, "rules": [{"metric": "short_label", "min": 0.5}]}
    (config.parent / "release.yaml").write_text(yaml.safe_dump(policy), encoding="utf-8")
    with config.open("a", encoding="utf-8") as handle:
        handle.write("policy: release.yaml\n")
    with platform(tmp_path, broker_url=redis_url(6379, REDIS_DB), chunk_size=12) as running:
        running.python(SETUP.format(root=str(tmp_path), password=PASSWORD))
        port = free_port()
        running.start(["serve", "--no-worker", f"--port={port}"], name="serve")
        wait_until(lambda: server_ready(port), timeout=90, what="the site to serve")
        base = f"http://127.0.0.1:{port}"
        run_id = running.submit(config)

        context = browser.new_context()
        page = context.new_page()
        page.set_default_timeout(20_000)
        page.goto(base + "/accounts/login/")
        page.fill("input[name=username]", "carol")
        page.fill("input[name=password]", PASSWORD)
        page.click("button[type=submit]")
        page.wait_for_url(re.compile(r".*/$"))
        page.goto(f"{base}/runs/{run_id}/")
        assert page.locator("#progress [data-progress-of]").inner_text() == f"0/{N_CASES}"
        assert page.locator(".head-badges [data-status-of]").inner_text() == "queued"
        provenance = page.locator("dl.provenance").inner_text()
        assert "queue-bot version 1" in provenance
        assert re.search(r"Policy\s+[0-9a-f]{64}", provenance), provenance
        page.evaluate("() => { window.sameDocument = true; }")

        worker = running.worker(concurrency=1)
        try:
            seen = counts_until_reload(page)
            page.wait_for_load_state("load")
            page.wait_for_selector("#gate .badge.gate-pass")
        finally:
            running.kill(worker)
        done = [int(text.split("/")[0]) for text in seen]
        between = {count for count in done if 0 < count < N_CASES}
        assert len(between) >= 3, seen
        assert between - {12}, seen  # per case, not per chunk of 12
        assert done == sorted(done), seen
        assert page.locator(".head-badges [data-status-of]").inner_text() == "succeeded"
        assert page.locator("#progress").count() == 0
        context.close()
