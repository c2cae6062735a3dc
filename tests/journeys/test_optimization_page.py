"""An optimization's page as its user sees it, in real headless Chromium: from a user's
folder, `oloproof optimize` (examples/optimize_calc, the local OpenAI-compatible server as
the system's and the reflection's model) records into the folder's store while
`oloproof serve` shows it.

The page is opened while the search is held at its first reflection (the seed recorded,
nothing else yet), then follows it to the end without loading again; the finished page
names the system and release and shows the lineage, the seed → winner diff, the score
over the budget spent with the seed's missing score drawn as missing, the reflection's
prompt whole, and downloads the winning texts, which `oloproof winner` writes alike.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.journeys.conftest import REPO, run_user, user_env
from tests.journeys.test_approvals import account, dashboard, signed_in
from tests.support.fake_openai import FakeOpenAI, Reply, Request, Status
from tests.support.optimize_task import (
    INSTRUCTION,
    REFLECT_MODEL,
    SEED_PROMPT,
    model_environment,
)

pytestmark = [pytest.mark.browser, pytest.mark.slow]

WINNING_PROMPT = f"{SEED_PROMPT} {INSTRUCTION}"


class HeldReflection:
    """The task model fails every call under the seed's prompt (so the seed's val score is
    missing) and answers with the number under the winning one; the reflection model
    proposes the winning prompt, its first reply held until `release()`."""

    def __init__(self) -> None:
        self.asked = threading.Event()
        self._go_on = threading.Event()

    def release(self) -> None:
        self._go_on.set()

    def __call__(self, request: Request) -> Reply | Status:
        if request.model == REFLECT_MODEL:
            self.asked.set()
            self._go_on.wait(timeout=240)
            return Reply(f"```\n{WINNING_PROMPT}\n```", prompt_tokens=400, completion_tokens=20)
        if INSTRUCTION not in request.system_text:
            return Status(500)
        question = request.user_text.split("What is ", 1)[-1].rstrip("?").split(" + ")
        return Reply(str(sum(int(part) for part in question)))


@pytest.fixture
def example(tmp_path: Path) -> Path:
    folder = tmp_path / "calc-opt"
    shutil.copytree(REPO / "examples" / "optimize_calc", folder)
    config = yaml.safe_load((folder / "optimize.yaml").read_text(encoding="utf-8"))
    config["budget"] = {"metric_calls": 24}
    config["engine"] = "gepa"
    (folder / "optimize.yaml").write_text(yaml.safe_dump(config), encoding="utf-8")
    return folder


def start_optimize(folder: Path, server: FakeOpenAI) -> subprocess.Popen[str]:
    environment = user_env(**model_environment(server.base_url), OLOPROOF_REFLECTION_TIMEOUT="300")
    return subprocess.Popen(
        [str(Path(sys.executable).parent / "oloproof"), "optimize", "optimize.yaml"],
        cwd=folder,
        env=environment,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def figure(page: Any, element_id: str) -> dict[str, Any]:
    found = page.evaluate(
        "id => { const el = document.getElementById(id);"
        " return {data: el.data, layout: el.layout}; }",
        element_id,
    )
    return dict(found)


def test_the_page_follows_a_running_optimization_and_exports_the_winner(
    example: Path, fake_openai: FakeOpenAI, browser: Any
) -> None:
    held = HeldReflection()
    fake_openai.respond_with(held)
    password = account(example, "ana")
    search = start_optimize(example, fake_openai)
    try:
        assert held.asked.wait(timeout=300), "the search never reached its first reflection"
        with dashboard(example) as base, signed_in(browser, base, "ana", password) as page:
            page.goto(base + "/optimizations/1/")
            running_shows_the_seed_alone(page)
            page.evaluate("window.sameDocument = true")
            held.release()
            out, err = search.communicate(timeout=600)
            assert search.returncode == 0, out + err
            # The page's CSP refuses a string of script, so the wait reads the element.
            page.locator("#optimization-status", has_text="succeeded").wait_for(timeout=60_000)
            assert page.evaluate("window.sameDocument === true")  # updated, not reloaded
            finished_page_shows_the_search(page, fake_openai)
            downloads_match_the_command(page, example)
            page.goto(base + "/optimizations/")
            assert "calc release 1" in page.inner_text("table.optimizations-table tbody tr")
    finally:
        held.release()
        if search.poll() is None:
            search.kill()
            search.communicate()


def running_shows_the_seed_alone(page: Any) -> None:
    assert page.inner_text("#optimization-status") == "running"
    assert page.inner_text("#optimization-system") == "calc"
    assert page.inner_text("#optimization-release") == "1"
    assert page.locator("tr.candidate").count() == 1
    assert "missing (4 of 4 cases)" in page.inner_text("#candidate-0")
    page.wait_for_selector("#candidate-scores .main-svg")
    assert not page.locator("#export-json").count()  # no winner while the search runs


def finished_page_shows_the_search(page: Any, server: FakeOpenAI) -> None:
    page.wait_for_selector("#lineage .main-svg")
    assert page.locator("tr.candidate").count() >= 2
    assert "1+opt1.1" in page.inner_text("#candidate-1")
    edges, nodes = figure(page, "lineage")["data"]
    assert [edges["x"][0], edges["x"][1]] == [0, 1]  # the seed, then its child
    assert nodes["text"][0] == "#0 missing"
    assert nodes["text"][1] == "#1 1.000"

    scores = figure(page, "candidate-scores")
    assert scores["data"][0]["y"][0] is None  # the seed's missing score is not a 0
    assert any(note["text"] == "missing" for note in scores["layout"]["annotations"])
    assert "missing" in page.locator("#candidate-scores").text_content()
    over_calls = figure(page, "budget-calls")
    best, points = over_calls["data"]
    assert 1.0 in points["y"]
    assert 0 not in points["y"]
    assert best["name"] == "best so far"
    assert over_calls["layout"]["xaxis"]["range"][0] == 0
    assert "#0 missing" in page.locator("#budget-calls").text_content()
    cost_axis = figure(page, "frontier-cost")["layout"]["xaxis"]["range"]
    assert cost_axis[0] == 0
    assert cost_axis[1] > 0

    diff = page.inner_text("#winner-texts")
    assert f"-{SEED_PROMPT}" in diff
    assert f"+{WINNING_PROMPT}" in diff
    prompt = next(request for request in server.requests if request.model == REFLECT_MODEL)
    fold = page.locator("#candidate-1 + tr details.reflection")
    fold.locator("summary").click()
    assert fold.locator("pre").first.inner_text() == prompt.user_text.strip()
    # Whole on the screen too: its long lines wrap rather than run out of the card.
    assert fold.locator("pre").first.evaluate("el => el.scrollWidth <= el.clientWidth")


def downloads_match_the_command(page: Any, folder: Path) -> None:
    with page.expect_download() as download:
        page.click("#export-yaml")
    written = Path(download.value.path()).read_text(encoding="utf-8")
    assert download.value.suggested_filename == "calc-1+opt1.1.components.yaml"
    exported = yaml.safe_load(written)
    assert exported["components"] == {"system_prompt": WINNING_PROMPT}
    assert exported["system"] == "calc"
    with page.expect_download() as download:
        page.click("#export-json")
    as_json = json.loads(Path(download.value.path()).read_text(encoding="utf-8"))
    assert as_json == exported

    done = run_user(["oloproof", "winner", "1", "--format", "yaml"], folder)
    assert done.returncode == 0, done.stderr
    assert done.stdout == written
