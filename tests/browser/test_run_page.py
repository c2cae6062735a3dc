"""The run page, its charts, the system page and the runs list in a real browser.

Chart checks read the figure Plotly actually drew (the graph div's `data` and
`layout`, including the ranges it settled on) and the legend it rendered.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from oloproof import evaluate
from oloproof.evaluators import ExactMatch
from oloproof.testing import queue_approvals
from runs.models import Approval, Run
from runs.store import DjangoStore
from tests.browser.conftest import Visit
from tests.runs.conftest import make_bot, member, short_answer, support_rows

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

PASSING: dict[str, Any] = {
    "version": 1,
    "rules": [{"metric": "exact_label", "min": 0.8}, {"missing": {"max_count": 0}}],
}
UNDECIDED: dict[str, Any] = {"version": 1, "rules": [{"metric": "exact_label", "min": 0.9}]}

FIGURE = """(id) => {
  const graph = document.getElementById(id);
  const legend = [...graph.querySelectorAll('.legend .traces .legendtext')].map(e => e.textContent);
  return {
    data: graph.data.map(t => ({name: t.name, x: t.x, y: t.y, showlegend: t.showlegend,
      symbol: t.marker && t.marker.symbol, dash: t.line && t.line.dash,
      hovertext: t.hovertext, visible: t.visible})),
    xrange: graph._fullLayout.xaxis.range,
    yrange: graph._fullLayout.yaxis.range,
    annotations: (graph.layout.annotations || []).map(a => a.text),
    legend: legend,
  };
}"""


def recorded(
    version: str,
    n: int = 20,
    *,
    wrong_every: int = 0,
    broken_every: int = 0,
    source: Any = None,
    **kwargs: Any,
) -> Run:
    """A recorded run of support-bot at `version` on cases without clusters."""
    rows = [
        {key: value for key, value in row.items() if key != "cluster"} for row in support_rows(n)
    ]
    with queue_approvals():
        result = evaluate(
            make_bot(version=version, wrong_every=wrong_every, broken_every=broken_every),
            rows if source is None else source,
            [ExactMatch(criterion="exact_label", field="label"), short_answer],
            store=DjangoStore(),
            concurrency=1,
            **kwargs,
        )
    return Run.objects.get(pk=int(result.run_id))


def figure(visit: Visit, div_id: str) -> dict[str, Any]:
    visit.page.wait_for_selector(f"#{div_id} .main-svg")
    return visit.page.evaluate(FIGURE, div_id)


def assert_legend_truthful(drawn: dict[str, Any]) -> None:
    """Every legend entry names a trace that has something to draw, and only those."""
    listed = [t for t in drawn["data"] if t["showlegend"] is not False]
    assert drawn["legend"] == [t["name"] for t in listed]
    for trace in listed:
        assert trace["x"], f"legend entry {trace['name']!r} has nothing drawn"


def test_the_run_page_compares_with_the_previous_release(visit: Visit) -> None:
    first = recorded("1")
    second = recorded("2", wrong_every=2)
    member("carol", "viewer")
    visit.login("carol")
    visit.go(f"/runs/{first.pk}/")
    page = visit.page
    assert page.locator("#previous-release").count() == 0
    visit.go(f"/runs/{second.pk}/")
    verdict = page.locator("#previous-release .previous-verdict").inner_text()
    assert verdict == (
        f"Compared with @1 (run #{first.pk}), paired case by case over 20 cases: "
        "worse on exact_label."
    )
    rows = page.locator("#previous-release table.previous-table tbody tr")
    assert rows.count() == 2
    assert rows.nth(0).locator("td").nth(3).inner_text() == "-0.500"
    assert rows.nth(0).locator("td.pairs-over").inner_text() == "20 of 20 pairs complete"
    assert rows.nth(0).locator("td").nth(8).inner_text() == "worse"
    assert rows.nth(1).locator("td").nth(8).inner_text() == "no clear difference"
    page.click("#previous-release a.button")
    page.wait_for_url(re.compile(rf".*/compare/\?baseline={first.pk}&candidate={second.pk}$"))
    assert page.locator("text=Regressed (10)").is_visible()


def test_gate_rules_read_as_sentences_with_their_figures(visit: Visit) -> None:
    run = recorded("1", policy=PASSING)
    member("carol", "viewer")
    visit.login("carol")
    visit.go(f"/runs/{run.pk}/")
    page = visit.page
    sentences = page.locator("#gate .gate-rule .rule-sentence").all_inner_texts()
    assert sentences == [
        "At least 80 % of cases must pass exact_label: the lower end of the 95 % interval "
        "is 0.832, so this rule passes.",
        "No case may be missing: 0 of 20 are missing, so this rule passes.",
    ]
    headers = page.locator("#gate table.gate-figures thead th").all_text_contents()
    assert headers == [
        "Rule",
        "Outcome",
        "Estimate",
        "Interval",
        "Threshold",
        "Cases used",
        "Missing",
    ]
    first_rule = page.locator("#gate table.gate-figures tbody tr").nth(0)
    cells = first_rule.locator("td").all_inner_texts()
    assert cells == ["exact_label ≥ 0.8", "pass", "1.000", "[0.832, 1.000]", "≥ 0.8", "20", "0"]
    assert page.locator("#gate dl.figures").count() == 0
    assert "max_count" not in page.locator("#gate").inner_text()


def test_an_inconclusive_gate_says_how_many_cases_would_settle_it(visit: Visit) -> None:
    run = recorded("1", policy=UNDECIDED)
    member("carol", "viewer")
    visit.login("carol")
    visit.go(f"/runs/{run.pk}/")
    plan = visit.page.locator("#gate .gate-plan").inner_text()
    assert plan.startswith("How many cases would settle it? With about ")
    assert "cases in all (this run has 20), every rule of this gate has an 80 % chance" in plan
    cases = re.match(r"How many cases would settle it\? With about ([\d,]+) cases", plan)
    assert cases is not None
    # The rule and the summary give the box's figure, not answers of their own.
    more = visit.page.locator("#gate .rule-more").inner_text()
    assert more.startswith(f"About {cases[1]} cases in all (this run has 20)")
    summary = visit.page.locator("#gate .gate-summary").inner_text()
    assert f"about {cases[1]} cases in all for an 80 % chance of passing" in summary


def test_the_run_chart_is_zoomed_shows_thresholds_and_missing_and_its_legend_is_true(
    visit: Visit,
) -> None:
    complete = recorded("1", policy=PASSING)
    gaps = recorded("2", broken_every=5, policy=PASSING)
    member("carol", "viewer")
    visit.login("carol")
    visit.go(f"/runs/{complete.pk}/")
    drawn = figure(visit, "run-chart")
    low, high = drawn["xrange"]
    # The interval [0.832, 1] and the threshold 0.8 fill the axis instead of its last tenth.
    assert 0.7 < low < 0.8
    assert 1.0 < high <= 1.04
    assert_legend_truthful(drawn)
    assert drawn["legend"] == ["interval", "estimate", "threshold"]
    threshold = next(t for t in drawn["data"] if t["name"] == "threshold")
    assert threshold["x"] == [0.8]
    assert drawn["annotations"] == []
    caption = visit.page.locator(".chart-caption").inner_text()
    assert "Grey" not in caption
    assert "threshold" in caption

    visit.go(f"/runs/{gaps.pk}/")
    drawn = figure(visit, "run-chart")
    assert drawn["annotations"] == ["4 missing", "4 missing"]
    assert_legend_truthful(drawn)
    assert "missing" in visit.page.locator(".chart-caption").inner_text()


def test_a_metric_with_nothing_observed_is_grey_and_named_so(visit: Visit) -> None:
    broken = recorded("1", broken_every=1)
    member("carol", "viewer")
    visit.login("carol")
    visit.go(f"/runs/{broken.pk}/")
    drawn = figure(visit, "run-chart")
    assert drawn["legend"] == ["nothing observed"]
    assert_legend_truthful(drawn)
    assert "Grey bar: nothing observed" in visit.page.locator(".chart-caption").inner_text()


def test_equal_series_on_the_system_page_stay_apart(visit: Visit) -> None:
    first = recorded("1")
    recorded("2")
    recorded("3", wrong_every=4)
    member("carol", "viewer")
    visit.login("carol")
    visit.go(f"/systems/{first.release.system_id}/")
    drawn = figure(visit, "release-chart")
    criteria = [t for t in drawn["data"] if t["visible"] is True]
    assert [t["name"] for t in criteria] == ["exact_label", "short_answer"]
    exact, short = criteria
    # Both criteria are 1.000 on releases 1 and 2: the same values, drawn apart.
    assert exact["y"][:2] == short["y"][:2] == [1.0, 1.0]
    assert all(a != b for a, b in zip(exact["x"], short["x"], strict=True))
    assert exact["symbol"] != short["symbol"]
    assert exact["dash"] != short["dash"]
    assert all("exact_label" in text for text in exact["hovertext"])
    low, high = drawn["yrange"]
    assert low > 0.3
    assert high <= 1.04
    assert_legend_truthful(drawn)
    # Drawn on screen: the two markers of release 1 are at different places.
    points = visit.page.locator("#release-chart .scatterlayer .trace")
    first_points = [points.nth(index).locator(".point").first.bounding_box() for index in range(2)]
    assert first_points[0]["x"] != first_points[1]["x"]


def test_a_refused_approval_keeps_the_comment_and_says_what_to_do(visit: Visit) -> None:
    failing = recorded("1", wrong_every=2, policy=UNDECIDED)
    assert failing.gate.outcome == "fail"
    member("alice", "approver")
    visit.login("alice")
    visit.go(f"/runs/{failing.pk}/")
    page = visit.page
    page.check("input[name=decision][value=approve]")
    page.fill("textarea[name=comment]", "the labeller changed; accepted for now")
    page.click("text=Record decision")
    assert page.locator(".messages .error").inner_text() == (
        "This gate failed; tick 'Override' to approve it anyway, and say why."
    )
    assert page.input_value("textarea[name=comment]") == "the labeller changed; accepted for now"
    assert Approval.objects.count() == 0
    page.check("input[name=override]")
    page.click("text=Record decision")
    assert "Approved the gate" in page.locator(".messages .success").inner_text()
    assert Approval.objects.get().comment == "the labeller changed; accepted for now"


def test_the_runs_list_names_the_dataset(visit: Visit, tmp_path: Path) -> None:
    path = tmp_path / "support_tickets.jsonl"
    path.write_text("".join(json.dumps(row) + "\n" for row in support_rows(8)))
    from_file = recorded("1", source=str(path))
    recorded("2")
    member("carol", "viewer")
    visit.login("carol")
    names = visit.page.locator("table.runs-table .dataset-name").all_inner_texts()
    assert names == ["rows given in code", "support_tickets.jsonl"]
    assert from_file.dataset.digest[:10] not in visit.page.locator("table.runs-table").inner_text()
