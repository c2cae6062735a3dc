"""Long lists page by cursor: the case table, the run history and their API routes.

A walk by `next` cursors shows every row that was there throughout exactly once, even
while rows are added; going back by `previous` retraces it; no query a page issues
skips rows with OFFSET or counts the case table; the table's size comes from the
counts the recording keeps on the run.
"""

from __future__ import annotations

import re
from datetime import timedelta
from typing import Any

import pytest
from django.db import connection
from django.db.models import Count
from django.test import Client, override_settings
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

import oloproof_core as engine
from oloproof.evaluators import ExactMatch
from runs.models import CaseResult, Run
from runs.selectors.case_table import CASE_ORDER
from runs.selectors.keyset import Cursor, KeyOrder, cursor_decode, cursor_encode, keyset_page
from runs.store import DjangoStore
from runs.writers.recording import case_results_create, run_redate
from tests.support.synthetic_runs import make_run

pytestmark = pytest.mark.django_db

EVALUATORS = [ExactMatch(criterion="exact_label", field="label").describe()]


def recorded(n: int, *, version: str = "1", every_failed: int = 4, every_missing: int = 9) -> Run:
    """A run of `n` cases recorded through the store: case i fails every `every_failed`,
    is missing every `every_missing` (its system raised)."""
    values = [
        None if i % every_missing == 0 else 0.0 if i % every_failed == 0 else 1.0 for i in range(n)
    ]
    result = make_run({"exact_label": values}, system=("support-bot", version))
    result.provenance["evaluators"] = EVALUATORS
    return Run.objects.get(pk=int(DjangoStore().record_run(result)))


def case_rows(run: Run) -> list[tuple[int, int]]:
    return list(CaseResult.objects.filter(run=run).values_list("position", "id"))


def add_cases(run: Run, positions: list[int], tag: str) -> list[int]:
    """New case results of `run` at these positions, through the recording's writer."""
    ids = []
    for position in positions:
        case = engine.CaseResult(id=f"{tag}_{position}", input={}, expected=None, output={})
        case_results_create(
            run_id=run.pk, cases=[case], pass_fail=frozenset(), first_position=position
        )
        ids.append(CaseResult.objects.get(run=run, case_id=case.id).pk)
    return ids


def walk(query: Any, order: KeyOrder, size: int, between: Any = None) -> list[Any]:
    """Every id a walk by `next` cursors shows, calling `between(page_number)` after each."""
    seen: list[Any] = []
    cursor = None
    for number in range(1000):
        page = keyset_page(query, order=order, size=size, cursor=cursor)
        seen += page.ids
        if between is not None:
            between(number)
        if page.next is None:
            return seen
        cursor = Cursor(cursor_decode(page.next))
    raise AssertionError("the walk did not end")


def test_a_walk_shows_each_case_once_while_cases_are_added_before_and_after_it():
    run = recorded(40)
    before = {pk for _, pk in case_rows(run)}
    added: list[int] = []

    def meanwhile(number: int) -> None:
        # Behind the walk (a position it passed), at a position it is on (the same key,
        # a higher id), and ahead of it.
        position = 7 * (number + 1)
        added.extend(add_cases(run, [position - 5, position, position + 12], f"p{number}"))

    query = CaseResult.objects.filter(run=run)
    seen = walk(query, CASE_ORDER, 7, meanwhile)
    assert len(seen) == len(set(seen)), "a case was shown twice"
    assert before <= set(seen), f"cases never shown: {sorted(before - set(seen))}"
    assert set(seen) <= before | set(added)
    # Every case added ahead of the walk's position was reached.
    ahead = {pk for pk in added if pk in set(seen)}
    assert len(ahead) >= len(added) // 3
    order = dict(CaseResult.objects.filter(pk__in=seen).values_list("pk", "position"))
    keys = [(order[pk], pk) for pk in seen]
    assert keys == sorted(keys), "the walk left the table's order"


def test_previous_cursors_retrace_the_walk_backwards():
    run = recorded(23)
    query = CaseResult.objects.filter(run=run)
    pages = []
    cursor = None
    while True:
        page = keyset_page(query, order=CASE_ORDER, size=5, cursor=cursor)
        pages.append(page)
        if page.next is None:
            break
        cursor = Cursor(cursor_decode(page.next))
    assert [len(page.ids) for page in pages] == [5, 5, 5, 5, 3]
    assert pages[0].first
    assert pages[0].previous is None
    assert not pages[-1].first
    back = pages[-1]
    for expected in reversed(pages[:-1]):
        back = keyset_page(
            query, order=CASE_ORDER, size=5, cursor=Cursor(cursor_decode(back.previous), True)
        )
        assert back.ids == expected.ids
        assert back.next is not None
    assert back.previous is None
    assert back.first


def test_runs_created_at_the_same_moment_are_paged_by_id_without_loss():
    runs = [recorded(2, version=str(i)) for i in range(7)]
    when = timezone.now() - timedelta(days=1)
    for run in runs[1:5]:  # four runs share one creation time
        run_redate(run=run, when=when)
    from runs.selectors.runs import RUN_ORDER

    seen = walk(Run.objects.all(), RUN_ORDER, 2)
    expected = list(Run.objects.order_by("-created_at", "-id").values_list("pk", flat=True))
    assert seen == expected
    assert sorted(seen) == sorted(run.pk for run in runs)


def test_a_cursor_token_survives_its_url_and_a_forged_one_is_refused():
    moment = timezone.now()
    assert cursor_decode(cursor_encode((moment, 12))) == (moment, 12)
    assert cursor_decode(cursor_encode((41, 7))) == (41, 7)
    for forged in ("not-base64!", cursor_encode((1, 2))[:-3], "WyJ4IiwxLDJd"):
        with pytest.raises(Exception, match="not one this list gave out"):
            cursor_decode(forged)


@pytest.fixture
def client(viewer) -> Client:
    client = Client()
    client.force_login(viewer)
    return client


def pager_link(html: str, kind: str) -> str | None:
    found = re.search(rf'class="pager-{kind}" rel="\w+" href="\?([^"]*)"', html)
    return None if found is None else found.group(1).replace("&amp;", "&")


def shown_cases(html: str) -> list[str]:
    return re.findall(r'<tr data-case="([^"]+)">', html)


def case_table_sql(client: Client, path: str) -> tuple[str, list[str]]:
    with CaptureQueriesContext(connection) as queries:
        response = client.get(path)
    assert response.status_code == 200
    return response.content.decode(), [query["sql"] for query in queries.captured_queries]


def assert_no_offset_or_count(sqls: list[str], table: str) -> None:
    touching = [sql for sql in sqls if table in sql]
    assert touching, f"no query read {table}"
    for sql in touching:
        assert " OFFSET " not in sql.upper(), sql
        assert "COUNT(" not in sql.upper(), sql


@pytest.mark.parametrize(
    "query",
    [
        "",
        "outcome=failed",
        "outcome=missing&cols=case",
        "criterion=exact_label&outcome=failed",
        "q=case_00",
        "annotation=unannotated",
    ],
)
def test_the_case_table_pages_by_cursor_with_no_offset_and_no_count(client, query):
    run = recorded(180, every_failed=2, every_missing=3)  # 60 failed, 60 missing
    path = f"/runs/{run.pk}/cases/?{query}"
    walked: list[str] = []
    for _ in range(10):
        html, sqls = case_table_sql(client, path)
        assert_no_offset_or_count(sqls, '"runs_caseresult"')
        walked += shown_cases(html)
        following = pager_link(html, "next")
        if following is None:
            break
        path = f"/runs/{run.pk}/cases/?{following}"
    expected = [case.case_id for case in _filtered(run, query)]
    assert walked == expected
    assert len(walked) > 50, "the walk should span pages"


def _filtered(run: Run, query: str) -> list[CaseResult]:
    cases = CaseResult.objects.filter(run=run).order_by("position")
    if "outcome=failed" in query:
        return list(cases.filter(outcome="failed"))
    if "outcome=missing" in query:
        return list(cases.filter(outcome="missing"))
    if "q=case_00" in query:
        return list(cases.filter(case_id__startswith="case_00"))
    return list(cases)


def test_the_table_says_its_size_from_the_runs_counts_or_a_capped_count(client, monkeypatch):
    run = recorded(130)
    assert (run.outcome_passed, run.outcome_failed, run.outcome_missing) == (86, 29, 15)
    html = client.get(f"/runs/{run.pk}/cases/").content.decode()
    assert '<span class="pager-total">130 in all</span>' in html
    assert '<span class="badge">86 passed</span>' in html
    html = client.get(f"/runs/{run.pk}/cases/?outcome=failed").content.decode()
    assert "29 in all" in html
    monkeypatch.setattr("runs.selectors.keyset.COUNT_CAP", 40)
    html = client.get(f"/runs/{run.pk}/cases/?q=case").content.decode()
    assert "more than 40 in all" in html
    html = client.get(f"/runs/{run.pk}/cases/?q=case_001").content.decode()
    assert "10 in all" in html


def test_counts_kept_by_the_recording_match_the_rows_for_runs_recorded_as_they_go():
    result = make_run({"exact_label": [1.0, 0.0, None, 1.0, 0.0, 1.0]})
    result.provenance["evaluators"] = EVALUATORS
    run = Run.objects.get(pk=int(DjangoStore().record_run(result)))
    rows = dict(CaseResult.objects.filter(run=run).values_list("outcome").annotate(n=Count("id")))
    kept = {"passed": run.outcome_passed, "failed": run.outcome_failed}
    kept["missing"] = run.outcome_missing
    assert kept == {"passed": 3, "failed": 2, "missing": 1}
    assert {outcome: rows.get(outcome, 0) for outcome in kept} == kept
    # Cases added later (a chunk, a batch recorded as it goes) add to the counts.
    add_cases(run, [10, 11], "later")
    run.refresh_from_db()
    assert run.outcome_passed == kept["passed"] + 2


def test_a_run_whose_counts_were_not_kept_is_counted():
    from runs.selectors.cases import run_outcome_counts

    run = recorded(12)
    run.outcome_passed = run.outcome_failed = run.outcome_missing = None
    counts = run_outcome_counts(run=run)
    assert (counts["passed"], counts["failed"], counts["missing"]) == (8, 2, 2)


def test_an_earlier_page_link_starts_at_its_position_and_a_bad_cursor_at_the_first_page(client):
    run = recorded(130)
    html = client.get(f"/runs/{run.pk}/cases/?page=3").content.decode()
    assert shown_cases(html)[:2] == ["case_0100", "case_0101"]
    assert pager_link(html, "previous") is not None
    html = client.get(f"/runs/{run.pk}/cases/?after=bogus").content.decode()
    assert shown_cases(html)[0] == "case_0000"
    assert "no longer valid" in html
    assert pager_link(html, "previous") is None


def test_the_history_pages_by_cursor_with_no_offset_and_no_count(client):
    # Fifty runs a page: the walk needs more runs than that.
    runs = [recorded(1, version=str(number)) for number in range(58)]
    path, walked = "/", []
    while path is not None:
        html, sqls = case_table_sql(client, path)
        assert_no_offset_or_count(sqls, '"runs_run"')
        walked += [int(pk) for pk in re.findall(r'<td><a href="/runs/(\d+)/">', html)]
        following = pager_link(html, "next")
        path = None if following is None else f"/?{following}"
    assert walked == sorted((run.pk for run in runs), reverse=True)


def test_the_api_walks_a_runs_cases_by_cursor(viewer, token_for):
    run = recorded(23)
    headers = {"HTTP_AUTHORIZATION": f"Bearer {token_for(viewer)}"}
    client = Client()
    path = f"/api/runs/{run.pk}/cases?limit=10"
    walked, pages = [], []
    with CaptureQueriesContext(connection) as queries:
        while path is not None:
            page = client.get(path, **headers).json()
            assert (page["count"], page["count_capped"]) == (23, False)
            pages.append(page)
            walked += [item["case_id"] for item in page["items"]]
            path = None if page["next"] is None else f"{path.split('&')[0]}&after={page['next']}"
    assert_no_offset_or_count([q["sql"] for q in queries.captured_queries], '"runs_caseresult"')
    assert walked == [f"case_{i:04d}" for i in range(23)]
    back = client.get(
        f"/api/runs/{run.pk}/cases?limit=10&before={pages[1]['previous']}", **headers
    ).json()
    assert [item["case_id"] for item in back["items"]] == walked[:10]
    refused = client.get(f"/api/runs/{run.pk}/cases?offset=10", **headers)
    assert refused.status_code == 400
    assert "after" in refused.json()["detail"]
    forged = client.get(f"/api/runs/{run.pk}/cases?after=bogus", **headers)
    assert forged.status_code == 400
    assert "not one this list gave out" in forged.json()["detail"]


def test_server_timing_is_added_only_when_switched_on(client, viewer):
    assert "Server-Timing" not in client.get("/accounts/login/")
    with override_settings(OLOPROOF_SERVER_TIMING=True):
        timed = Client()
        header = timed.get("/accounts/login/")["Server-Timing"]
    assert re.fullmatch(r"app;dur=\d+\.\d", header)
