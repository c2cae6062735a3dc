"""The case table in a real browser: criterion columns and filters, search in every field,
annotating a case (rate, comment, edit, trail, filter), and exporting what the table shows."""

from __future__ import annotations

import csv
import io
import json
import re
from pathlib import Path
from typing import Any

import pytest

from metrics.models import CaseVerdict, MetricEstimate
from runs.models import CaseAnnotation, CaseAnnotationChange, Run
from tests.browser.conftest import Visit
from tests.runs.conftest import member
from tests.support.case_runs import ticket_run

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def run() -> Run:
    return ticket_run()


def case_ids(page: Any) -> list[str]:
    return page.locator("table.cases-table tbody tr[data-case]").evaluate_all(
        "rows => rows.map(row => row.dataset.case)"
    )


def filter_by(page: Any, **choices: str) -> None:
    for name, value in choices.items():
        if name == "q":
            page.fill("input[name=q]", value)
        else:
            page.select_option(f"select[name={name}]", value)
    page.click("#case-filters button[type=submit]")
    page.wait_for_load_state("load")


def test_criterion_columns_and_the_criterion_filter_show_that_criterions_verdict(
    visit: Visit, run: Run
) -> None:
    member("vera", "viewer")
    visit.login("vera")
    visit.go(f"/runs/{run.pk}/cases/")
    page = visit.page
    headings = page.locator("table.cases-table thead th").all_text_contents()
    assert {"Expected", "exact_label", "reply_quality"} <= set(headings)
    assert page.locator("tr[data-case='ticket-03'] td.expected-cell").inner_text() == (
        '{"label": "shipping"}'
    )
    # pick columns: drop Expected and exact_label, add Input; the URL remembers the choice
    page.click(".column-picker summary")
    page.uncheck("input[name=cols][value=expected]")
    page.uncheck("input[name=crit][value=exact_label]")
    page.check("input[name=cols][value=input]")
    filter_by(page, criterion="reply_quality", outcome="failed")
    assert re.search(r"cols=input", page.url)
    headings = page.locator("table.cases-table thead th").all_text_contents()
    assert "Input" in headings
    assert "Expected" not in headings
    assert "exact_label" not in headings
    assert case_ids(page) == ["ticket-00", "ticket-03", "ticket-06", "ticket-09"]
    for case_id in case_ids(page):
        cell = page.locator(f"tr[data-case='{case_id}'] td[data-criterion='reply_quality']")
        assert cell.locator(".badge").inner_text() == "failed", case_id
        assert f"Too curt for ticket {int(case_id[-2:])}" in cell.inner_text()
    page.reload()
    assert not page.is_checked("input[name=cols][value=expected]")
    assert page.is_checked("input[name=cols][value=input]")
    assert visit.dialogs == []


def test_search_finds_cases_by_input_expected_output_and_error(visit: Visit, run: Run) -> None:
    member("vera", "viewer")
    visit.login("vera")
    visit.go(f"/runs/{run.pk}/cases/")
    page = visit.page
    filter_by(page, q="parcel question 7")
    assert case_ids(page) == ["ticket-07"]
    filter_by(page, q="shipping", search_in="expected")
    assert case_ids(page) == [f"ticket-{i:02d}" for i in range(1, 12, 2)]
    filter_by(page, q="reply number 11", search_in="output")
    assert case_ids(page) == ["ticket-11"]
    filter_by(page, q="timeout", search_in="error")
    assert case_ids(page) == ["ticket-05"]
    filter_by(page, q="timeout", search_in="input")
    assert case_ids(page) == []
    assert page.locator("text=No case matches.").is_visible()


def test_annotating_a_case_round_trip(visit: Visit, run: Run) -> None:
    member("rita", "runner")
    verdicts_before = list(CaseVerdict.objects.filter(run=run).values_list("case_id", "value"))
    estimates_before = list(
        MetricEstimate.objects.filter(run=run).values_list("metric", "estimate")
    )
    visit.login("rita")
    visit.go(f"/runs/{run.pk}/cases/ticket-01")
    page = visit.page
    assert page.locator("#no-annotations").is_visible()
    page.check("#annotation-form input[name=rating][value=pass]")
    page.fill("#annotation-form textarea[name=comment]", "'other' is a fair label here")
    page.click("#annotation-form button[type=submit]")
    page.wait_for_url(re.compile(rf".*/runs/{run.pk}/cases/ticket-01$"))
    assert "Annotation saved." in page.locator(".messages").inner_text()
    listed = page.locator("#annotation-list").inner_text()
    assert "rita" in listed
    assert "'other' is a fair label here" in listed
    # edit: a score and a new comment; the form starts from what rita said
    assert page.is_checked("#annotation-form input[name=rating][value=pass]")
    page.fill("#annotation-form input[name=score]", "0.6")
    page.fill("#annotation-form textarea[name=comment]", "Arguable; half right.")
    page.click("#annotation-form button[type=submit]")
    page.wait_for_load_state("load")
    trail = page.locator("#annotation-trail").inner_text()
    assert "Every change (2)" in trail
    assert "'other' is a fair label here" in trail
    assert "Arguable; half right." in trail
    assert "0.600" in page.locator("#annotation-list").inner_text()
    # the table finds it among the annotated and the disagreeing (exact_label failed it)
    visit.go(f"/runs/{run.pk}/cases/")
    filter_by(page, annotation="disagree")
    assert case_ids(page) == ["ticket-01"]
    cell = page.locator("tr[data-case='ticket-01'] td.annotations-cell").inner_text()
    assert "pass · score 0.6" in cell
    assert "rita" in cell
    filter_by(page, annotation="rated_fail")
    assert case_ids(page) == []
    # the verdicts and estimates are as they were recorded
    visit.go(f"/runs/{run.pk}/cases/ticket-01")
    assert "failed" in page.locator(".head-badges").inner_text()
    assert list(CaseVerdict.objects.filter(run=run).values_list("case_id", "value")) == (
        verdicts_before
    )
    assert list(MetricEstimate.objects.filter(run=run).values_list("metric", "estimate")) == (
        estimates_before
    )
    assert CaseAnnotation.objects.count() == 1
    assert CaseAnnotationChange.objects.count() == 2


def test_a_viewer_sees_annotations_but_no_form(visit: Visit, run: Run) -> None:
    member("vera", "viewer")
    visit.login("vera")
    visit.go(f"/runs/{run.pk}/cases/ticket-01")
    assert visit.page.locator("#annotation-form").count() == 0


def download(page: Any, selector: str, folder: Path) -> str:
    with page.expect_download() as started:
        page.click(selector)
    target = folder / started.value.suggested_filename
    started.value.save_as(target)
    return target.read_text(encoding="utf-8")


def test_the_export_links_download_what_the_table_shows(
    visit: Visit, run: Run, tmp_path: Path
) -> None:
    member("vera", "viewer")
    visit.login("vera")
    visit.go(f"/runs/{run.pk}/cases/")
    page = visit.page
    filter_by(page, criterion="reply_quality", outcome="failed")
    shown = case_ids(page)
    rows = list(csv.DictReader(io.StringIO(download(page, "#export-csv", tmp_path))))
    assert [row["case_id"] for row in rows] == shown
    assert rows[1]["reply_quality.feedback"] == "Too curt for ticket 3: greet the customer."
    assert json.loads(rows[1]["expected"]) == {"label": "shipping"}
    assert json.loads(rows[1]["input"]) == {"question": "parcel question 3"}
    lines = download(page, "#export-jsonl", tmp_path).splitlines()
    records = [json.loads(line) for line in lines]
    assert [record["case_id"] for record in records] == shown
    assert records[0]["verdicts"]["reply_quality"]["value"] == 0.25
