"""The optimization pages in a real browser: the list, one optimization with its charts,
lineage, diffs and proof, and the guided form switched to an optimization."""

from __future__ import annotations

from pathlib import Path

import pytest

from oloproof_core.optimize import load_optimize_config, run_optimization
from runs.store import DjangoStore
from runs.workers.optimization_ledger import DjangoLedger
from tests.browser.conftest import Visit
from tests.browser.test_dashboard import make_user
from tests.support.fake_openai import FakeOpenAI
from tests.support.optimize_task import INSTRUCTION, write_project

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_an_optimization_page_shows_scores_frontiers_lineage_and_the_proof(
    visit: Visit, tmp_path: Path, task_models: FakeOpenAI
) -> None:
    spec = load_optimize_config(str(write_project(tmp_path / "project")))
    result = run_optimization(spec=spec, store=DjangoStore(), ledger=DjangoLedger())
    make_user("carol", "runner")
    visit.login("carol")

    visit.go("/optimizations/")
    visit.page.click(f"a[href='/optimizations/{result.optimization_id}/']")
    page = visit.page
    page.wait_for_selector("#candidate-scores .main-svg")
    assert page.locator("#frontier-cost .main-svg").count() >= 1
    assert page.locator("#frontier-latency .main-svg").count() >= 1
    assert page.locator("tr.candidate").count() == len(result.candidates)
    assert "succeeded" in page.inner_text("#optimization-status")
    assert "pass" in page.inner_text("#proof .gate-line")
    assert "optimism gap" in page.inner_text("#proof").lower()
    winner = result.winner.index
    diff = page.locator(f"#candidate-{winner} + tr details.diff")
    diff.locator("summary").click()
    assert INSTRUCTION in diff.locator("pre").inner_text()
    page.click(f"#candidate-{winner} a")
    page.wait_for_url(f"**/runs/{result.winner.val_run_id}/")
    assert not visit.dialogs


def test_the_guided_form_offers_an_optimization(visit: Visit) -> None:
    make_user("dave", "runner")
    visit.login("dave")
    visit.go("/runs/new/?kind=optimization")
    assert visit.page.is_checked("input[name=kind][value=optimization]")
    assert visit.page.locator("input[name=budget_metric_calls]").is_visible()
