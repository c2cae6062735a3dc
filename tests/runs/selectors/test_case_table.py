"""The case table page: expected and per-criterion columns, a criterion's own verdict when
filtered on it, columns kept in the URL, bulk reads."""

from __future__ import annotations

import re

import pytest
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext

from runs.models import Run
from tests.support.case_runs import ticket_run

pytestmark = pytest.mark.django_db


@pytest.fixture
def run() -> Run:
    return ticket_run()


@pytest.fixture
def client(viewer) -> Client:
    client = Client()
    client.force_login(viewer)
    return client


def rows_of(html: str) -> dict[str, str]:
    """Each table row's html by case id."""
    return {
        match.group(1): match.group(2)
        for match in re.finditer(r'<tr data-case="([^"]+)">(.*?)</tr>', html, re.S)
    }


def test_the_table_shows_expected_values_and_each_criterion_with_its_feedback(client, run):
    html = client.get(f"/runs/{run.pk}/cases/").content.decode()
    assert "<th>Input</th>" in html  # what each case asked, shown before anything is picked
    assert "<th>Expected</th>" in html
    assert '<th class="criterion-col"><bdi>reply_quality</bdi></th>' in html
    rows = rows_of(html)
    assert len(rows) == 12
    assert "{&quot;label&quot;: &quot;shipping&quot;}" in rows["ticket-01"]
    assert 'data-criterion="exact_label"><span class="badge outcome-failed">' in rows["ticket-01"]
    assert "Too curt for ticket 3: greet the customer." in rows["ticket-03"]
    assert (
        'data-criterion="reply_quality"><span class="badge outcome-missing">' in rows["ticket-05"]
    )


def test_filtered_on_a_criterion_each_row_shows_that_criterions_verdict(client, run):
    html = client.get(
        f"/runs/{run.pk}/cases/?criterion=reply_quality&outcome=failed"
    ).content.decode()
    rows = rows_of(html)
    assert sorted(rows) == ["ticket-00", "ticket-03", "ticket-06", "ticket-09"]
    for case_id, row in rows.items():
        verdict = re.search(
            r'<td class="verdict-cell" data-criterion="reply_quality">(.*?)</td>', row, re.S
        )
        assert verdict is not None, case_id
        assert "outcome-failed" in verdict.group(1)
        assert "0.250" in verdict.group(1)
        assert f"Too curt for ticket {int(case_id[-2:])}" in verdict.group(1)
        # the whole case's badge ("passed" for three of them) is not what the row shows
        assert 'class="outcome-cell"' not in row
    assert "<th><bdi>reply_quality</bdi></th>" in html


def test_the_columns_picked_are_remembered_in_the_url(client, run):
    path = f"/runs/{run.pk}/cases/?cols=case&cols=input&crit=reply_quality"
    html = client.get(path).content.decode()
    assert "<th>Input</th>" in html
    assert "<th>Expected</th>" not in html
    assert "<th>Latency</th>" not in html
    assert '<th class="criterion-col"><bdi>reply_quality</bdi></th>' in html
    assert '<th class="criterion-col"><bdi>exact_label</bdi></th>' not in html
    assert 'name="cols" value="input" checked' in html
    assert 'name="crit" value="reply_quality" checked' in html
    assert 'name="crit" value="exact_label">' in html
    # links to the other pages and the exports carry the same choice
    assert "cols=input" in html.split('id="export-csv"')[1].split(">")[0]
    unticked = client.get(f"/runs/{run.pk}/cases/?cols=case").content.decode()
    assert "<th>Expected</th>" not in unticked
    assert "criterion-col" not in unticked


def test_a_page_reads_in_bulk_whatever_its_size(client, run):
    with CaptureQueriesContext(connection) as small:
        client.get(f"/runs/{run.pk}/cases/?q=question&cols=case&crit=exact_label")
    with CaptureQueriesContext(connection) as full:
        client.get(f"/runs/{run.pk}/cases/")
    assert len(full) <= len(small) + 1  # one more for the full page's annotation column
    assert len(full) < 20


def test_search_on_the_page_reads_the_input(client, run):
    html = client.get(f"/runs/{run.pk}/cases/?q=parcel+question+7").content.decode()
    assert sorted(rows_of(html)) == ["ticket-07"]
    html = client.get(f"/runs/{run.pk}/cases/?q=timeout&search_in=error").content.decode()
    assert sorted(rows_of(html)) == ["ticket-05"]
    html = client.get(f"/runs/{run.pk}/cases/?q=timeout&search_in=input").content.decode()
    assert rows_of(html) == {}
    assert "No case matches." in html
