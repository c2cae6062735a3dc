"""The comparison grid in a real browser: filters, order, paging, the diff, links, exports."""

from __future__ import annotations

import csv
import json
import re
from pathlib import Path
from typing import Any

import pytest

from runs.models import Run
from tests.browser.conftest import Visit
from tests.runs.conftest import member, record_evaluation

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

N_CASES = 60
REGRESSED = [f"case_{i:05d}" for i in range(N_CASES) if i % 4 == 1 and i % 5]
MISSING = [f"case_{i:05d}" for i in range(0, N_CASES, 5)]


def recorded(version: str, **kwargs: Any) -> Run:
    return Run.objects.get(pk=int(record_evaluation(N_CASES, version=version, **kwargs).run_id))


@pytest.fixture
def pair() -> tuple[Run, Run]:
    """The candidate answers wrong on cases 1, 5, 9, … and fails on 0, 5, 10, …"""
    return recorded("1"), recorded("2", wrong_every=4, broken_every=5)


def open_grid(visit: Visit, pair: tuple[Run, Run]) -> Any:
    member("carol", "viewer")
    visit.login("carol")
    baseline, candidate = pair
    visit.go(f"/compare/?baseline={baseline.pk}&candidate={candidate.pk}")
    return visit.page


def shown(page: Any) -> list[str]:
    return page.locator("table.grid-table tbody tr[data-case]").evaluate_all(
        "rows => rows.map(row => row.dataset.case)"
    )


def test_filters_the_diff_and_links_to_both_runs(visit: Visit, pair: tuple[Run, Run]) -> None:
    baseline, candidate = pair
    page = open_grid(visit, pair)
    page.click("nav.grid-filters a[data-show=regressed]")
    page.wait_for_url(re.compile(r".*show=regressed.*"))
    assert shown(page) == REGRESSED
    row = page.locator(f"tr[data-case='{REGRESSED[0]}']")
    assert row.locator("td.candidate-output del").inner_text() == "other"
    assert row.locator("td.candidate-output ins").inner_text() == "refund"
    assert "1.000 → 0.000 (-1.000)" in row.locator("td.metric-value").first.inner_text()
    page.click("nav.grid-filters a[data-show=missing]")
    page.wait_for_url(re.compile(r".*show=missing.*"))
    assert shown(page) == MISSING
    assert "backend down on case 0" in page.locator("tr[data-case='case_00000']").inner_text()
    page.click("nav.grid-filters a[data-show=improved]")
    page.wait_for_url(re.compile(r".*show=improved.*"))
    assert page.locator("text=No case matches this filter.").is_visible()
    page.click("nav.grid-filters a[data-show=regressed]")
    page.wait_for_url(re.compile(r".*show=regressed.*"))
    page.locator(f"tr[data-case='{REGRESSED[0]}'] a.candidate-link").click()
    page.wait_for_url(re.compile(rf".*/runs/{candidate.pk}/cases/{REGRESSED[0]}$"))
    assert "failed" in page.locator(".head-badges").inner_text()
    page.go_back()
    page.locator(f"tr[data-case='{REGRESSED[0]}'] a.baseline-link").click()
    page.wait_for_url(re.compile(rf".*/runs/{baseline.pk}/cases/{REGRESSED[0]}$"))
    assert "passed" in page.locator(".head-badges").inner_text()
    assert visit.dialogs == []


def test_order_by_change_and_paging_through_all(visit: Visit, pair: tuple[Run, Run]) -> None:
    page = open_grid(visit, pair)
    assert page.locator("nav.grid-filters a[data-show=all]").inner_text() == f"All ({N_CASES})"
    first_page = shown(page)
    assert len(first_page) == 50
    page.click("nav.pager >> text=next ›")
    page.wait_for_url(re.compile(r".*page=2.*"))
    second_page = shown(page)
    assert len(second_page) == N_CASES - 50
    assert sorted(first_page + second_page) == [f"case_{i:05d}" for i in range(N_CASES)]
    page.select_option("form.grid-form select[name=order]", "change")
    page.click("form.grid-form button[type=submit]")
    page.wait_for_url(re.compile(r".*order=change.*"))
    statuses = page.locator("table.grid-table tbody tr[data-case]").evaluate_all(
        "rows => rows.map(row => row.dataset.status)"
    )
    assert statuses[: len(REGRESSED)] == ["regressed"] * len(REGRESSED)
    assert "regressed" not in statuses[len(REGRESSED) :]
    page.select_option("form.grid-form select[name=metric]", "short_answer")
    page.click("form.grid-form button[type=submit]")
    page.wait_for_url(re.compile(r".*metric=short_answer.*"))
    assert page.locator("nav.grid-filters a[data-show=changed]").inner_text() == "Changed (0)"


def test_the_export_links_download_the_shown_cases(
    visit: Visit, pair: tuple[Run, Run], tmp_path: Path
) -> None:
    page = open_grid(visit, pair)
    page.click("nav.grid-filters a[data-show=regressed]")
    page.wait_for_url(re.compile(r".*show=regressed.*"))
    with page.expect_download() as download_info:
        page.click("a.export-csv")
    path = tmp_path / "grid.csv"
    download_info.value.save_as(path)
    rows = list(csv.DictReader(path.open(encoding="utf-8", newline="")))
    assert [row["case_id"] for row in rows] == REGRESSED
    assert json.loads(rows[0]["baseline_output"]) == {"label": "other"}
    assert json.loads(rows[0]["candidate_output"]) == {"label": "refund"}
    assert rows[0]["exact_label change"] == "-1.0"
    with page.expect_download() as download_info:
        page.click("a.export-jsonl")
    path = tmp_path / "grid.jsonl"
    download_info.value.save_as(path)
    records = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    assert [record["case_id"] for record in records] == REGRESSED
    assert records[0]["metrics"]["short_answer"] == {
        "baseline": 1.0,
        "candidate": 1.0,
        "change": 0.0,
    }


def test_the_statistics_read_in_words(visit: Visit, pair: tuple[Run, Run]) -> None:
    page = open_grid(visit, pair)
    why = page.locator(".why-metric[data-metric=exact_label]").inner_text()
    complete = N_CASES - len(MISSING)
    assert f"over the {complete} cases with a value in both runs: {len(REGRESSED)} regressed" in why
    assert f"{len(MISSING)} missing from the candidate are not counted" in why
    assert "few clusters" in why
    row = page.locator("table.compare-table tr[data-metric=exact_label]")
    assert row.locator("td.q-value").inner_text() != ""
    page.click("text=Flag on plain p-values instead")
    page.wait_for_url(re.compile(r".*fdr=none.*"))
    assert page.locator("text=Flags on plain p-values").is_visible()
