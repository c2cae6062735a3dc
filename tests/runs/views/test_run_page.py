"""The run page over real recorded runs: the previous release, the gate in words, planning,
approvals that keep what was typed, and dataset names in the history."""

from __future__ import annotations

import html
import json
import re
from pathlib import Path
from typing import Any

import pytest
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext

import oloproof
from oloproof import evaluate
from oloproof.evaluators import ExactMatch
from oloproof.testing import queue_approvals
from runs.models import Approval, Run
from runs.selectors.previous_release import run_previous_comparison, run_previous_release
from runs.selectors.results import run_result
from runs.store import DjangoStore
from runs.views.gate_wording import MetricFacts, gate_rules_explained
from tests.runs.conftest import make_bot, record_evaluation, short_answer, support_rows

pytestmark = pytest.mark.django_db

PASSING: dict[str, Any] = {
    "version": 1,
    "rules": [{"metric": "exact_label", "min": 0.8}, {"missing": {"max_count": 0}}],
}
UNDECIDED: dict[str, Any] = {"version": 1, "rules": [{"metric": "exact_label", "min": 0.9}]}


def recorded(
    version: str, n: int = 20, *, wrong_every: int = 0, clusters: bool = False, **kwargs: Any
) -> Run:
    """A recorded run of support-bot at `version`; its cases carry no cluster unless asked."""
    rows = support_rows(n)
    if not clusters:
        rows = [{key: value for key, value in row.items() if key != "cluster"} for row in rows]
    with queue_approvals():
        result = evaluate(
            make_bot(version=version, wrong_every=wrong_every),
            rows,
            [ExactMatch(criterion="exact_label", field="label"), short_answer],
            store=DjangoStore(),
            concurrency=1,
            **kwargs,
        )
    return Run.objects.get(pk=int(result.run_id))


def page_of(user: Any, run: Run) -> str:
    """The run page as text, with isolation marks of user strings (`<bdi>`) taken out."""
    client = Client()
    client.force_login(user)
    response = client.get(f"/runs/{run.pk}/")
    assert response.status_code == 200
    return html.unescape(re.sub(r"</?bdi>", "", response.content.decode()))


def words(page: str) -> str:
    """The page's visible text, tags taken out and white space collapsed."""
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", "", page))


def test_a_first_release_has_no_comparison(teammate) -> None:
    first = recorded("1")
    assert run_previous_release(user=teammate, run=first) is None
    assert "Against the previous release" not in page_of(teammate, first)


def test_the_previous_release_says_what_each_figure_is_over(teammate) -> None:
    """Not "the same 20 cases" when four of them failed in the new run: the pairs, the
    complete pairs and the clusters each interval stands on are said beside it."""
    first = Run.objects.get(pk=int(record_evaluation(20, version="1").run_id))
    second = Run.objects.get(pk=int(record_evaluation(20, version="2", broken_every=5).run_id))
    page = page_of(teammate, second)
    said = f"Compared with @1 (run #{first.pk}), paired case by case over 20 cases:"
    assert said in words(page)
    table = page.split('<table class="table previous-table">')[1].split("</table>")[0]
    comparison = run_previous_comparison(user=teammate, run=second)
    assert comparison is not None
    assert comparison.comparison is not None
    clusters = comparison.comparison.metric("exact_label").n_clusters
    assert clusters
    assert f"16 of 20 pairs complete, {clusters} clusters" in words(table)


def test_the_run_page_compares_with_the_previous_release(teammate) -> None:
    first = recorded("1")
    second = recorded("2", wrong_every=2)
    assert run_previous_release(user=teammate, run=second) == first
    page = page_of(teammate, second)
    assert "Against the previous release" in page
    said = (
        f"Compared with @1 (run #{first.pk}), paired case by case over 20 cases: "
        "worse on exact_label."
    )
    assert said in words(page)
    # Ten of twenty answers turned wrong: 1.000 → 0.500; short_answer did not move.
    table = page.split('<table class="table previous-table">')[1].split("</table>")[0]
    assert "-0.500" in table
    assert "no clear difference" in table
    assert f"/compare/?baseline={first.pk}&candidate={second.pk}" in page
    # The block leads to the grid's cases whose output differs, both outputs side by side.
    grid = f"/compare/?baseline={first.pk}&candidate={second.pk}&show=output_changed#grid"
    assert grid in page
    client = Client()
    client.force_login(teammate)
    shown = client.get(grid.split("#")[0]).content.decode()
    assert shown.count("<tr data-case=") == 10
    assert shown.count('class="text-cell candidate-output diff"') == 10
    # The first release looks back at nothing, and the later one does not count.
    assert "Against the previous release" not in page_of(teammate, first)


def test_only_an_earlier_release_on_the_same_dataset_is_the_previous_one(teammate) -> None:
    first = recorded("1")
    recorded("2", n=12)
    third = recorded("3")
    assert run_previous_release(user=teammate, run=third) == first
    other_dataset = recorded("4", n=12)
    assert run_previous_release(user=teammate, run=other_dataset).release.version == "2"


def test_gate_rules_read_as_sentences_with_a_figures_table(teammate) -> None:
    run = recorded("1", policy=PASSING)
    assert run.gate.outcome == "pass"
    page = page_of(teammate, run)
    assert (
        "At least 80 % of cases must pass exact_label: the lower end of the 95 % interval "
        "is 0.832, so this rule passes." in page
    )
    assert "No case may be missing: 0 of 20 are missing, so this rule passes." in page
    figures = page.split('<table class="table gate-figures">')[1].split("</table>")[0]
    for header in ("Estimate", "Interval", "Threshold", "Cases used", "Missing"):
        assert f">{header}</th>" in figures
    assert "[0.832, 1.000]" in figures
    assert "≥ 0.8" in figures
    # No raw key dump of the stored figures.
    for key in ("side", "max_count", "n_observed", "method</dt>"):
        assert f"<dt>{key}" not in page


def test_an_inconclusive_gate_says_how_many_cases_would_settle_it(teammate) -> None:
    run = recorded("1", policy=UNDECIDED)
    assert run.gate.outcome == "inconclusive"
    planned = oloproof.plan(UNDECIDED, result=run_result(run=run, with_content=False))
    assert planned.cases is not None
    assert planned.cases > 20
    page = page_of(teammate, run)
    assert (
        "At least 90 % of cases must pass exact_label: the 95 % interval runs from 0.832 "
        "to 1.000 and contains 0.9, so this rule cannot be decided yet." in page
    )
    assert f"With about {planned.cases:,} cases in all (this run has 20)" in page
    assert "5 % of each metric's range beyond its threshold" in page
    # The engine's readout for the rule, as a whole sentence: the plan's figure too.
    reason = run.gate.rules[0]["reason"]
    assert f"about {planned.cases:,} cases in all give it an 80 % chance of passing" in reason
    assert not reason.rstrip(".").endswith("would")
    # One answer to "how many cases": the plan's, in the summary, the rule and the box;
    # the engine's projection and its power figure at the observed distance are not said.
    summary = html.unescape(page.split('<p class="gate-summary">')[1].split("</p>")[0])
    assert f"about {planned.cases:,} cases in all for an 80 % chance of passing" in summary
    assert "more cases needed" not in summary
    more = html.unescape(page.split('<div class="muted small rule-more">')[1].split("</div>")[0])
    assert more.startswith(f"About {planned.cases:,} cases in all (this run has 20)")
    assert f"the whole gate needs about {planned.cases:,}" in more
    stored = run.gate.rules[0]["more_cases"]
    assert stored["count"] != planned.cases
    assert f"{stored['count']:,} more cases" not in page
    assert "would decide it" not in page
    # The plan is computed once per finished run: a second view reads no verdicts.
    with CaptureQueriesContext(connection) as second_view:
        assert f"With about {planned.cases:,} cases" in page_of(teammate, run)
    assert not [query for query in second_view if "caseverdict" in query["sql"].lower()]


def test_a_passing_gate_shows_no_planning_figure(teammate) -> None:
    page = page_of(teammate, recorded("1", policy=PASSING))
    assert "How many cases would settle it?" not in page


def test_the_few_cluster_warning_is_shown_with_the_estimate_and_the_rule(teammate) -> None:
    run = recorded("1", clusters=True, policy=PASSING)
    warned = run.metrics.get(metric="exact_label")
    assert warned.n_clusters == 7
    assert warned.warning
    page = page_of(teammate, run)
    assert page.count(warned.warning) >= 2


def test_sentences_for_scores_failures_regressions_and_required_metrics() -> None:
    rules = [
        {
            "rule": "latency ≤ 0.5",
            "kind": "bound",
            "metric": "latency",
            "outcome": "fail",
            "figures": {"estimate": 0.7, "lower": 0.62, "upper": 0.8, "threshold": 0.5,
                        "side": "max", "n_observed": 40, "n_missing": 2},
        },
        {
            "rule": "exact_label no regression (margin 0.02)",
            "kind": "no_regression",
            "metric": "exact_label",
            "outcome": "pass",
            "figures": {"difference": 0.0, "lower": -0.01, "upper": 0.02, "margin": 0.02,
                        "n_pairs": 40, "n_missing_pairs": 0, "regressed": 1, "improved": 1,
                        "baseline": "support-bot@1"},
        },
        {
            "rule": "require tone",
            "kind": "require",
            "outcome": "fail",
            "figures": {"absent": ["tone"], "unobserved": []},
        },
    ]  # fmt: skip
    latency, regression, required = gate_rules_explained(
        rules=rules, confidence=0.95, metrics={"latency": MetricFacts("score")}
    )
    assert latency.sentence == (
        "latency must average at most 0.5: the lower end of the 95 % interval is 0.620, "
        "above 0.5 (2 missing cases widen it), so this rule fails."
    )
    assert (latency.threshold, latency.cases_used, latency.missing) == ("≤ 0.5", "40", "2")
    assert regression.sentence.startswith(
        "exact_label must not fall more than 0.02 below the baseline (support-bot@1): the "
        "lower end of the paired 95 % interval of the difference (this run − baseline) is "
        "−0.010"
    )
    assert regression.sentence.endswith("so this rule passes.")
    assert required.sentence == (
        "The run must report tone with at least one observed value: absent from the run: "
        "tone, so this rule fails."
    )


def test_approving_a_failed_gate_without_override_keeps_the_comment(approver) -> None:
    run = recorded("1", wrong_every=2, policy=UNDECIDED)
    assert run.gate.outcome == "fail"
    client = Client()
    client.force_login(approver)
    comment = "label drift is known <and accepted>"
    response = client.post(f"/runs/{run.pk}/decide", {"decision": "approve", "comment": comment})
    assert response.status_code == 400
    content = response.content.decode()
    assert "This gate failed; tick &#x27;Override&#x27; to approve it anyway, and say why." in (
        content
    )
    assert "send override=true" not in content
    assert html.escape(comment) in content
    assert re.search(r'<input type="radio" name="decision" value="approve"[^>]*checked', content)
    assert Approval.objects.count() == 0
    # The API keeps its own wording, for programs.
    api = client.post(
        f"/api/runs/{run.pk}/approvals",
        data=json.dumps({"decision": "approve", "comment": comment}),
        content_type="application/json",
    )
    assert "override=true" in api.content.decode()


def test_the_runs_list_names_each_dataset(teammate, tmp_path: Path) -> None:
    path = tmp_path / "support_tickets.jsonl"
    path.write_text("".join(json.dumps(row) + "\n" for row in support_rows(8)))
    with queue_approvals():
        result = evaluate(
            make_bot(version="1"),
            str(path),
            [ExactMatch(criterion="exact_label", field="label"), short_answer],
            store=DjangoStore(),
            concurrency=1,
        )
    run = Run.objects.select_related("dataset").get(pk=int(result.run_id))
    client = Client()
    client.force_login(teammate)
    recorded("2")
    with CaptureQueriesContext(connection) as one_row:
        client.get("/")
    for version in ("3", "4", "5"):
        recorded(version)
    with CaptureQueriesContext(connection) as many_rows:
        page = client.get("/").content.decode()
    listed = words(page.split('<table class="table runs-table">')[1].split("</table>")[0])
    assert "support_tickets.jsonl" in listed
    assert "rows given in code" in listed
    assert run.dataset.digest[:10] not in listed
    # Names come with the page's one joined read, not one query per row.
    assert len(many_rows) == len(one_row)


def test_a_failure_holm_does_not_confirm_and_a_capped_share_read_plainly() -> None:
    unconfirmed, share = gate_rules_explained(
        rules=[
            {
                "rule": "exact_label ≥ 0.9",
                "kind": "bound",
                "metric": "exact_label",
                "outcome": "inconclusive",
                "figures": {
                    "estimate": 0.8,
                    "lower": 0.82,
                    "upper": 0.89,
                    "threshold": 0.9,
                    "side": "min",
                    "n_observed": 300,
                    "n_missing": 0,
                    "fails_alone": True,
                },
            },
            {
                "rule": "exact_label missing ≤ 5%",
                "kind": "missing",
                "metric": "exact_label",
                "outcome": "fail",
                "figures": {"n_missing": 30, "n_cases": 300, "max_count": None, "max_rate": 0.05},
            },
        ],
        confidence=0.95,
        metrics={"exact_label": MetricFacts("pass_fail")},
    )
    assert unconfirmed.sentence == (
        "At least 90 % of cases must pass exact_label: the 95 % interval runs from 0.820 to "
        "0.890, which misses 0.9 on its own, but not at the stricter level Holm's procedure "
        "sets for a gate with several interval rules; more cases are needed to confirm the "
        "failure, so this rule cannot be decided yet."
    )
    assert share.sentence == (
        "At most 5 % of verdicts for exact_label may be missing: 30 of 300 are missing, so "
        "this rule fails."
    )
    assert (share.threshold, share.cases_used, share.missing) == ("≤ 5 %", "300", "30")
