"""Exports of a run's cases: CSV and JSONL contents, the table's filters, formula
escaping, streaming in bulk, and the same export from the page, the API and the library."""

from __future__ import annotations

import csv
import io
import json
from typing import Any

import pytest
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext

from runs.access import LOCAL
from runs.errors import InvalidRequestError
from runs.models import Run
from runs.selectors import exports
from runs.selectors.cases import CaseFilters
from runs.selectors.exports import csv_cell, run_cases_export
from runs.writers.annotations import AnnotationValues, case_annotation_save
from tests.support.case_runs import ticket_run

pytestmark = pytest.mark.django_db

FORMULA = '=HYPERLINK("http://evil", "click")'


@pytest.fixture
def run(teammate) -> Run:
    run = ticket_run()
    case_annotation_save(
        user=teammate,
        run=run,
        case_id="ticket-03",
        values=AnnotationValues(rating="pass", score=0.8, comment=FORMULA),
    )
    return run


def streamed(response: Any) -> str:
    assert response.streaming, "an export is streamed, not built in memory"
    return b"".join(response.streaming_content).decode()


def as_csv(text: str) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(text)))


def export_text(run: Run, export_format: str, **filters: Any) -> str:
    export = run_cases_export(
        user=LOCAL, run_id=run.pk, filters=CaseFilters(**filters), export_format=export_format
    )
    return "".join(export.lines)


def test_the_csv_has_every_part_of_each_case(run) -> None:
    rows = as_csv(export_text(run, "csv"))
    assert [row["case_id"] for row in rows] == [f"ticket-{i:02d}" for i in range(12)]
    first = rows[1]
    assert json.loads(first["input"]) == {"question": "parcel question 1"}
    assert json.loads(first["expected"]) == {"label": "shipping"}
    assert json.loads(first["output"]) == {"label": "other", "reply": "Reply number 1"}
    assert first["exact_label.value"] == "0.0"
    assert first["exact_label.outcome"] == "failed"
    assert first["exact_label.feedback"] == "Expected 'shipping', got 'other'."
    assert first["reply_quality.value"] == "1.0"
    assert rows[5]["error"] == "RuntimeError: backend timeout on ticket 5"
    assert rows[5]["exact_label.outcome"] == "missing"
    assert rows[3]["reply_quality.feedback"] == "Too curt for ticket 3: greet the customer."
    note = json.loads(rows[3]["annotations"])
    assert [(n["author"], n["rating"], n["score"], n["comment"]) for n in note] == [
        ("bob", "pass", 0.8, FORMULA)
    ]


def test_csv_cells_a_spreadsheet_would_run_are_escaped() -> None:
    for text in ("=1+1", "+1", "-2", "@SUM(A1)", "\tx", "\rx"):
        assert csv_cell(text) == "'" + text
    assert csv_cell("plain") == "plain"
    assert csv_cell(-2.5) == -2.5  # our own numbers stay numbers
    assert csv_cell({"a": "=x"}) == '{"a": "=x"}'
    assert csv_cell(None) == ""


def test_a_formula_in_a_comment_or_output_reaches_the_csv_escaped(run) -> None:
    text = export_text(run, "csv", annotation="annotated")
    rows = as_csv(text)
    assert [row["case_id"] for row in rows] == ["ticket-03"]
    for row in rows:
        for value in row.values():
            assert not value.startswith(("=", "+", "-", "@")), value


def test_the_jsonl_export_keeps_values_typed(run) -> None:
    records = [json.loads(line) for line in export_text(run, "jsonl").splitlines()]
    assert len(records) == 12
    third = records[3]
    assert third["input"] == {"question": "parcel question 3"}
    assert third["verdicts"]["reply_quality"] == {
        "value": 0.25,
        "outcome": "failed",
        "feedback": "Too curt for ticket 3: greet the customer.",
        "error": "",
    }
    assert third["annotations"][0]["comment"] == FORMULA  # JSON needs no escaping
    assert records[5]["error"] == {"type": "RuntimeError", "message": "backend timeout on ticket 5"}
    assert records[5]["output"] is None


def test_the_export_follows_the_tables_filters(run) -> None:
    failed = [
        json.loads(line)["case_id"]
        for line in export_text(
            run, "jsonl", criterion="reply_quality", outcome="failed"
        ).splitlines()
    ]
    assert failed == ["ticket-00", "ticket-03", "ticket-06", "ticket-09"]
    searched = as_csv(export_text(run, "csv", search="parcel question 7"))
    assert [row["case_id"] for row in searched] == ["ticket-07"]


def test_an_export_reads_in_batches_not_per_case(run, monkeypatch) -> None:
    monkeypatch.setattr(exports, "EXPORT_BATCH", 5)
    with CaptureQueriesContext(connection) as queries:
        lines = export_text(run, "jsonl").splitlines()
    assert len(lines) == 12
    # run, criteria, ids, then four reads per batch of 5 (three batches)
    assert len(queries) <= 6 + 4 * 3


def test_an_unknown_format_is_a_clear_error(run) -> None:
    with pytest.raises(InvalidRequestError, match="export format must be one of csv, jsonl"):
        run_cases_export(user=LOCAL, run_id=run.pk, filters=CaseFilters(), export_format="xlsx")


def test_the_page_link_and_the_api_stream_the_same_export(run, viewer, token_for) -> None:
    client = Client()
    client.force_login(viewer)
    page = client.get(f"/runs/{run.pk}/cases.csv?criterion=reply_quality&outcome=failed")
    assert page["Content-Type"].startswith("text/csv")
    assert f'filename="run-{run.pk}-cases.csv"' in page["Content-Disposition"]
    from_page = streamed(page)
    assert [row["case_id"] for row in as_csv(from_page)] == [
        "ticket-00",
        "ticket-03",
        "ticket-06",
        "ticket-09",
    ]
    api = Client().get(
        f"/api/runs/{run.pk}/export?format=csv&criterion=reply_quality&outcome=failed",
        HTTP_AUTHORIZATION=f"Bearer {token_for(viewer)}",
    )
    assert api.status_code == 200
    assert streamed(api) == from_page
    jsonl = client.get(f"/runs/{run.pk}/cases.jsonl?annotation=annotated")
    assert [json.loads(line)["case_id"] for line in streamed(jsonl).splitlines()] == ["ticket-03"]


def test_the_command_line_and_the_api_offer_the_tables_own_choices() -> None:
    """The CLI and the API schema spell the filters out; they are the selectors' own."""
    from typing import get_args

    from oloproof.cli import _export
    from runs.api import cases as api_cases
    from runs.selectors.annotations import ANNOTATION_FILTERS
    from runs.selectors.case_search import SEARCH_FIELDS

    assert _export.SEARCH_FIELDS == SEARCH_FIELDS
    assert set(_export.ANNOTATION_FILTERS) == set(ANNOTATION_FILTERS)
    assert set(get_args(api_cases.SearchField)) == set(SEARCH_FIELDS)
    assert set(get_args(api_cases.AnnotationFilter)) == set(ANNOTATION_FILTERS)
