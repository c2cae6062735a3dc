"""The compare grid's "Output differs" filter: the cases whose recorded outputs differ
between two runs, whether or not a score moved, on the page, its exports and the API."""

from __future__ import annotations

import csv
import io
import json
from typing import Any

import pytest
from django.test import Client

from oloproof import evaluate, system
from oloproof.evaluators import ExactMatch
from oloproof.testing import queue_approvals
from runs.models import Run
from runs.store import DjangoStore
from tests.runs.conftest import compare_grid, short_answer, support_rows
from tests.runs.selectors.test_compare_grid import shown_cases, streamed

pytestmark = pytest.mark.django_db

N_CASES = 40
FLIPPED = {3, 11, 19}
"""The candidate answers these with the wrong label: their scores change."""
REPHRASED = {7, 23, 27}
"""The candidate words its reply differently (27 is wrong in both runs): scores stay."""
BROKEN = 35
"""Fails the same way in both runs: no output on either side, nothing differs."""
OUTPUT_CHANGED = [f"case_{i:05d}" for i in sorted(FLIPPED | REPHRASED)]
SCORE_CHANGED = [f"case_{i:05d}" for i in sorted(FLIPPED)]


def recorded(version: str, *, wrong: set[int], rephrased: set[int]) -> Run:
    @system(name="support-bot", version=version)
    def answer(case: dict[str, Any]) -> dict[str, str]:
        number = int(case["question"].split("#")[1])
        if number == BROKEN:
            raise RuntimeError(f"backend down on case {number}")
        right = "refund" if "refund" in case["question"] else "other"
        label = ("other" if right == "refund" else "refund") if number in wrong else right
        reply = "Thanks, we are looking into it." if number in rephrased else "We are on it."
        return {"label": label, "reply": reply}

    checks = [ExactMatch(criterion="exact_label", field="label"), short_answer]
    with queue_approvals():
        result = evaluate(answer, support_rows(N_CASES), checks, store=DjangoStore(), concurrency=1)
    return Run.objects.get(pk=int(result.run_id))


@pytest.fixture
def pair() -> tuple[Run, Run]:
    """40 cases on one dataset; the candidate's output differs on exactly 6 of them."""
    baseline = recorded("1", wrong={27}, rephrased=set())
    return baseline, recorded("2", wrong=FLIPPED | {27}, rephrased=REPHRASED)


def test_the_output_filter_shows_exactly_the_cases_whose_output_differs(
    viewer_client: Client, pair: tuple[Run, Run]
) -> None:
    assert shown_cases(compare_grid(viewer_client, pair, show="changed")) == SCORE_CHANGED
    response = compare_grid(viewer_client, pair, show="output_changed")
    assert response.status_code == 200
    assert shown_cases(response) == OUTPUT_CHANGED
    html = response.content.decode()
    assert 'data-show="output_changed"' in html
    assert "Output differs (6)" in html
    row = html.split('<tr data-case="case_00023"')[1].split("</tr>")[0]
    assert "parcel #23" in row  # the input
    assert "&quot;label&quot;: &quot;other&quot;" in row  # the expected value
    baseline_cell = row.split('class="text-cell baseline-output">')[1].split("</td>")[0]
    assert "We are on it." in baseline_cell
    candidate_cell = row.split('class="text-cell candidate-output diff">')[1].split("</td>")[0]
    assert "<ins>" in candidate_cell
    assert "looking" in candidate_cell
    for case_id in OUTPUT_CHANGED:
        row = html.split(f'<tr data-case="{case_id}"')[1].split("</tr>")[0]
        assert row.count('class="text-cell') == 4, "input, expected and both outputs"


def test_the_output_filter_exports_and_pages_through_the_api(
    viewer_client: Client, pair: tuple[Run, Run]
) -> None:
    baseline, candidate = pair
    query = {"baseline": baseline.pk, "candidate": candidate.pk, "show": "output_changed"}
    rows = list(csv.DictReader(io.StringIO(streamed(viewer_client.get("/compare/export", query)))))
    assert [row["case_id"] for row in rows] == OUTPUT_CHANGED
    seven = rows[OUTPUT_CHANGED.index("case_00007")]
    assert json.loads(seven["baseline_output"])["reply"] == "We are on it."
    assert json.loads(seven["candidate_output"])["reply"] == "Thanks, we are looking into it."
    jsonl = viewer_client.get("/api/compare/export", {**query, "format": "jsonl"})
    assert [json.loads(line)["case_id"] for line in streamed(jsonl).splitlines()] == (
        OUTPUT_CHANGED
    )
    page = viewer_client.get("/api/compare/cases", {**query, "limit": 4, "offset": 2}).json()
    assert page["count"] == 6
    assert [item["case_id"] for item in page["items"]] == OUTPUT_CHANGED[2:6]
    item = page["items"][0]
    assert item["status"] == "regressed"
    assert item["baseline"]["output"] != item["candidate"]["output"]


def test_a_filter_not_offered_is_refused_with_the_filters_offered(
    viewer_client: Client, pair: tuple[Run, Run]
) -> None:
    """The page and its export answer 400; the API 422, as for any query value its
    schema refuses, with the values it accepts."""
    baseline, candidate = pair
    query = {"baseline": baseline.pk, "candidate": candidate.pk, "show": "outputs"}
    page = compare_grid(viewer_client, pair, show="outputs")
    assert page.status_code == 400
    assert "show must be one of all, changed, regressed, improved, missing, output_changed" in (
        page.content.decode()
    )
    export = viewer_client.get("/compare/export", query)
    assert export.status_code == 400
    assert "output_changed" in export.content.decode()
    for path in ("/api/compare/cases", "/api/compare/export"):
        response = viewer_client.get(path, query)
        assert response.status_code == 422, path
        assert "'missing' or 'output_changed'" in response.json()["detail"][0]["msg"], path
