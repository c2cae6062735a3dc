"""User-supplied strings render as inert text: no script runs, no element is injected."""

from __future__ import annotations

from typing import Any

import pytest

from oloproof import evaluate, system
from oloproof.evaluators import ExactMatch, MetricFile
from runs.models import Run
from runs.services import approval_create
from runs.store import DjangoStore
from tests.browser.conftest import Visit
from tests.runs.conftest import member

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

PAYLOAD = "<script>alert(1)</script><img src=x onerror=alert(2)>"
HOSTILE_ID = "<img src=x onerror=alert(3)>"
METRIC = """
def score(input, output, expected=None):
    return 1.0, {"feedback": "<script>alert(5)</script><img src=x onerror=alert(6)>"}
"""


def record_hostile_run(tmp_path: Any) -> Run:
    @system(name="<script>alert(4)</script>bot", version="<b>1</b>")
    def hostile(case: dict[str, Any]) -> dict[str, str]:
        if case["n"] == 2:
            raise ValueError(PAYLOAD)
        return {"label": PAYLOAD}

    rows = [
        {
            "id": HOSTILE_ID if n == 0 else f"case_{n}",
            "input": {"n": n, "text": PAYLOAD},
            "expected": {"label": PAYLOAD if n == 1 else "other"},
        }
        for n in range(4)
    ]
    metric = tmp_path / "hostile_metric.py"
    metric.write_text(METRIC)
    result = evaluate(
        hostile,
        rows,
        [ExactMatch(criterion="exact_label", field="label"), MetricFile(metric)],
        policy={"version": 1, "rules": [{"metric": "exact_label", "min": 0.5}]},
        store=DjangoStore(),
        concurrency=1,
    )
    return Run.objects.get(pk=int(str(result.run_id)))


def test_hostile_strings_render_as_text_on_every_page(visit: Visit, tmp_path) -> None:
    run = record_hostile_run(tmp_path)
    approver = member("alice", "approver")
    approval_create(run=run, user=approver, decision="reject", comment=PAYLOAD)
    visit.login("alice")
    pages = [
        "/",
        f"/runs/{run.pk}/",
        f"/runs/{run.pk}/cases/",
        f"/runs/{run.pk}/cases/?q=%3Cscript%3E",
        f"/runs/{run.pk}/cases/case_1",
        f"/runs/{run.pk}/cases/case_2",
        f"/systems/{run.release.system_id}/",
        "/gates/",
    ]
    page = visit.page
    for path in pages:
        visit.go(path)
        page.wait_for_timeout(150)
        assert page.locator("img").count() == 0, path
        # The only inline scripts in the page body are plotly's own figure calls.
        inline = page.eval_on_selector_all(
            "main script:not([src])", "nodes => nodes.map(node => node.textContent)"
        )
        assert all("Plotly.newPlot" in text for text in inline), path
    visit.go(f"/runs/{run.pk}/cases/case_1")
    assert PAYLOAD in page.locator("pre.output").inner_text()
    feedback = page.locator("tr", has_text="hostile_metric").locator("td.feedback")
    assert "<script>alert(5)</script>" in feedback.inner_text()
    visit.go(f"/runs/{run.pk}/cases/case_2")
    assert PAYLOAD in page.locator(".error-text").first.inner_text()
    # The hostile case id is a working link, shown as text.
    visit.go(f"/runs/{run.pk}/cases/")
    page.click(f"table.cases-table a bdi:text-is('{HOSTILE_ID}')")
    page.wait_for_load_state("load")
    assert page.locator("h1.case-title").inner_text() == HOSTILE_ID
    visit.go(f"/systems/{run.release.system_id}/")
    assert page.locator("h1").inner_text() == "<script>alert(4)</script>bot"
    assert "<b>1</b>" in page.locator("table.releases-table").inner_text()
    visit.go("/gates/")
    assert PAYLOAD in page.locator("table.audit-table").inner_text()
    assert visit.dialogs == []
