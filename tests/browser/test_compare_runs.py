"""Comparing releases as people do, in a real browser at 1,280 px: tick runs in the
history, press Compare, read each run against the baseline the page pre-filled (the
earliest release, or the approved run), and find a regression's case in the grid."""

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

N_CASES = 40
POLICY: dict[str, Any] = {"version": 1, "rules": [{"metric": "exact_label", "min": 0.5}]}
REGRESSED = [f"case_{i:05d}" for i in range(N_CASES) if i % 4 == 1]


def recorded(version: str, **kwargs: Any) -> Run:
    return Run.objects.get(pk=int(record_evaluation(N_CASES, version=version, **kwargs).run_id))


def viewer(visit: Visit, monkeypatch: pytest.MonkeyPatch, name: str = "vera") -> None:
    """An account made as users make them (`oloproof user create --viewer`), signed in
    on a 1,280 × 800 window."""
    monkeypatch.setattr("sys.stdin", io.StringIO(PASSWORD + "\n"))
    assert main(["user", "create", name, "--viewer", "--password-stdin"]) == 0
    visit.page.set_viewport_size({"width": 1280, "height": 800})
    visit.login(name)


def compare_ticked(visit: Visit, runs: list[Run]) -> Any:
    page = visit.page
    visit.go("/")
    for run in runs:
        page.check(f"tr[data-run='{run.pk}'] input[name=runs]")
    page.click("form#compare-ticked button[type=submit]")
    page.wait_for_url(re.compile(r".*/compare/\?runs=.*"))
    return page


def shown(page: Any) -> list[str]:
    return page.locator("table.grid-table tbody tr[data-case]").evaluate_all(
        "rows => rows.map(row => row.dataset.case)"
    )


def row(page: Any, metric: str, run: Run) -> Any:
    return page.locator(f"table.side-by-side tr[data-metric='{metric}'][data-run='{run.pk}']")


def test_two_releases_from_the_history_and_a_regressions_case(
    visit: Visit, monkeypatch: pytest.MonkeyPatch
) -> None:
    older, newer = recorded("1"), recorded("2", wrong_every=4)
    viewer(visit, monkeypatch)
    page = compare_ticked(visit, [newer, older])

    assert page.locator("h1").inner_text() == "Compare 2 runs"
    assert page.locator("select[name=baseline]").input_value() == str(older.pk)
    assert "baseline" in page.locator(f"table.side-runs tr[data-run='{older.pk}']").inner_text()
    exact = row(page, "exact_label", newer)
    assert exact.locator("td >> nth=4").inner_text() == "-0.250"  # 10 of 40 answers went wrong
    assert exact.locator("a.to-regressed").inner_text() == str(len(REGRESSED))
    # What the interval stands on, said beside it: the dataset's cases come in 7 clusters.
    assert exact.locator("td.pairs-over").inner_text() == (
        f"{N_CASES} of {N_CASES} pairs complete, 7 clusters"
    )

    page.locator(
        f"table.side-by-side tr[data-metric='exact_label'][data-run='{newer.pk}'] a.to-regressed"
    ).click()
    page.wait_for_url(re.compile(r".*show=regressed.*"))
    assert shown(page) == REGRESSED
    assert f"Cases: #{newer.pk} against #{older.pk}" in page.locator("#grid h2").inner_text()
    case = page.locator(f"tr[data-case='{REGRESSED[0]}']")
    assert case.locator("td.candidate-output del").inner_text() == "other"
    assert case.locator("td.candidate-output ins").inner_text() == "refund"

    # Readable at 1,280 px: the input and output columns keep a text's width, and the
    # grid stays inside its card (it scrolls there when it must).
    for column in ("td.text-cell >> nth=0", "td.baseline-output", "td.candidate-output"):
        assert case.locator(column).bounding_box()["width"] >= 150
    card = page.locator("#grid").bounding_box()
    wrap = page.locator("#grid .table-wrap").bounding_box()
    assert wrap["x"] + wrap["width"] <= card["x"] + card["width"]
    assert visit.dialogs == []


def test_three_releases_against_the_approved_one_with_metric_columns_folded(
    visit: Visit, monkeypatch: pytest.MonkeyPatch
) -> None:
    first = recorded("1")
    approved = recorded("2", policy=POLICY)
    approval_create(
        run=approved, user=member("alice", "approver"), decision="approve", comment="ships"
    )
    third = recorded("3", wrong_every=4)
    viewer(visit, monkeypatch)
    page = compare_ticked(visit, [first, approved, third])

    assert page.locator("h1").inner_text() == "Compare 3 runs"
    assert page.locator("select[name=baseline]").input_value() == str(approved.pk)
    assert row(page, "exact_label", first).locator("td.flag").inner_text() == "—"
    assert row(page, "exact_label", third).locator("a.to-regressed").inner_text() == "10"

    page.click(f"nav.pair-tabs a[data-candidate='{third.pk}']")
    page.wait_for_url(re.compile(rf".*candidate={third.pk}.*"))
    page.click("nav.grid-filters a[data-show=regressed]")
    page.wait_for_url(re.compile(r".*show=regressed.*"))
    assert shown(page) == REGRESSED
    assert page.locator("nav.grid-filters a[data-show=regressed]").inner_text() == (
        f"Regressed ({len(REGRESSED)})"
    )

    page.click("a.fold-metrics")
    page.wait_for_url(re.compile(r".*columns=one.*"))
    assert shown(page) == REGRESSED  # the filter and the pair are kept
    folded = page.locator(f"tr[data-case='{REGRESSED[0]}'] td.metric-values").inner_text()
    assert "exact_label 1.000 → 0.000 (-1.000)" in folded
    assert page.locator("table.grid-table th.metric-col").count() == 1

    page.select_option("select[name=baseline]", str(first.pk))
    page.click("form.side-by-side-form button[type=submit]")
    page.wait_for_url(re.compile(rf".*baseline={first.pk}.*"))
    assert "baseline" in page.locator(f"table.side-runs tr[data-run='{first.pk}']").inner_text()
    assert page.locator(f"table.side-by-side tr[data-run='{approved.pk}']").count() >= 1


def test_runs_of_two_datasets_are_refused_with_the_reason(
    visit: Visit, monkeypatch: pytest.MonkeyPatch
) -> None:
    full = recorded("1")
    fewer = Run.objects.get(pk=int(record_evaluation(10, version="2").run_id))
    viewer(visit, monkeypatch)
    page = compare_ticked(visit, [full, fewer])
    assert "evaluated on different datasets" in page.locator(".problem").inner_text()
    assert page.locator("table.side-by-side").count() == 0
