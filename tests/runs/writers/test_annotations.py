"""Annotations: who may rate and comment, the audit trail, filters, the API, and that
verdicts and estimates never move."""

from __future__ import annotations

import json
from typing import Any

import pytest
from django.test import Client

from metrics.models import CaseVerdict, MetricEstimate
from runs.access import LOCAL
from runs.errors import (
    ImmutableRecordError,
    InvalidRequestError,
    NotFoundError,
    NotPermittedError,
)
from runs.models import CaseAnnotation, CaseAnnotationChange, CaseResult, Run
from runs.selectors.annotations import ANNOTATION_FILTERS, case_annotations
from runs.selectors.cases import CaseFilters, run_case_table
from runs.writers.annotations import AnnotationValues, case_annotation_save
from tests.support.case_runs import ticket_run

pytestmark = pytest.mark.django_db


@pytest.fixture
def run() -> Run:
    return ticket_run()


def save(user: Any, run: Run, case_id: str, **values: Any) -> CaseAnnotation:
    return case_annotation_save(
        user=user, run=run, case_id=case_id, values=AnnotationValues(**values)
    )


def measured(run: Run) -> list[Any]:
    verdicts = (
        CaseVerdict.objects.filter(run=run)
        .order_by("id")
        .values_list("case_id", "criterion", "value", "feedback")
    )
    estimates = (
        MetricEstimate.objects.filter(run=run)
        .order_by("id")
        .values_list("metric", "estimate", "lower", "upper")
    )
    outcomes = CaseResult.objects.filter(run=run).order_by("id").values_list("case_id", "outcome")
    return [list(verdicts), list(estimates), list(outcomes)]


def test_a_runner_rates_comments_and_edits_and_every_change_is_kept(run, teammate) -> None:
    before = measured(run)
    save(teammate, run, "ticket-03", rating="fail", comment="Curt, as the judge says.")
    save(teammate, run, "ticket-03", rating="fail", comment="Curt, as the judge says.")  # no change
    save(teammate, run, "ticket-03", rating="pass", score=0.75, comment="Fine on a second read.")
    found = case_annotations(user=teammate, run_id=run.pk, case_id="ticket-03")
    assert [(a.author_name, a.rating, a.score, a.comment) for a in found.annotations] == [
        ("bob", "pass", 0.75, "Fine on a second read.")
    ]
    assert [(c.version, c.rating, c.score, c.comment) for c in found.changes] == [
        (1, "fail", None, "Curt, as the judge says."),
        (2, "pass", 0.75, "Fine on a second read."),
    ]
    assert found.changes[0].changed_at <= found.changes[1].changed_at
    assert measured(run) == before, "an annotation changed a recorded verdict or estimate"


def test_each_person_has_their_own_annotation(run, teammate, approver) -> None:
    save(teammate, run, "ticket-01", rating="fail")
    save(approver, run, "ticket-01", rating="pass", comment="The label is arguable.")
    found = case_annotations(user=teammate, run_id=run.pk, case_id="ticket-01")
    assert {(a.author_name, a.rating) for a in found.annotations} == {
        ("bob", "fail"),
        ("alice", "pass"),
    }


def test_viewers_outsiders_and_nobody_cannot_annotate(run, viewer, outsider) -> None:
    from django.contrib.auth.models import AnonymousUser

    with pytest.raises(NotPermittedError, match="needs the runner role"):
        save(viewer, run, "ticket-01", rating="fail")
    with pytest.raises(NotFoundError):
        save(outsider, run, "ticket-01", rating="fail")
    with pytest.raises(NotPermittedError, match="signed-in account"):
        save(AnonymousUser(), run, "ticket-01", rating="fail")
    with pytest.raises(NotPermittedError, match="signed-in account"):
        save(LOCAL, run, "ticket-01", rating="fail")  # the process must say who annotates
    assert CaseAnnotation.objects.count() == 0


def test_mistakes_are_clear_errors(run, teammate) -> None:
    with pytest.raises(InvalidRequestError, match=r"score must be a number from 0 to 1, got 1\.5"):
        save(teammate, run, "ticket-01", score=1.5)
    with pytest.raises(InvalidRequestError, match="rating must be pass or fail"):
        save(teammate, run, "ticket-01", rating="maybe")
    with pytest.raises(InvalidRequestError, match="at most 10,000 characters"):
        save(teammate, run, "ticket-01", comment="x" * 10_001)
    with pytest.raises(NotFoundError, match="has no case 'ticket-99'"):
        save(teammate, run, "ticket-99", rating="fail")
    with pytest.raises(InvalidRequestError, match="score must be a number"):
        save(teammate, run, "ticket-01", score=float("nan"))


def test_the_trail_cannot_be_rewritten(run, teammate) -> None:
    save(teammate, run, "ticket-01", rating="fail")
    change = CaseAnnotationChange.objects.get()
    change.comment = "rewritten"
    with pytest.raises(ImmutableRecordError):
        change.save()
    with pytest.raises(ImmutableRecordError):
        CaseAnnotationChange.objects.filter(pk=change.pk).update(comment="rewritten")
    with pytest.raises(ImmutableRecordError):
        CaseAnnotationChange.objects.all().delete()
    with pytest.raises(ImmutableRecordError):
        change.delete()


def ids(run: Run, **filters: Any) -> list[str]:
    return [case.case_id for case in run_case_table(run=run, filters=CaseFilters(**filters))]


def test_the_table_filters_by_annotation(run, teammate, approver) -> None:
    save(teammate, run, "ticket-00", rating="fail", comment="no greeting")  # passed as a case
    save(teammate, run, "ticket-01", rating="pass")  # failed as a case (exact_label)
    save(teammate, run, "ticket-02", rating="pass")  # agrees
    save(approver, run, "ticket-03", rating="pass")  # passed as a case, failed reply_quality
    save(approver, run, "ticket-04", score=0.4)  # passed everywhere: more than 0.5 away
    save(approver, run, "ticket-06", score=0.8)  # passed as a case, 0.25 on reply_quality
    save(teammate, run, "ticket-07", rating="fail")
    save(teammate, run, "ticket-07", rating="")  # withdrawn: kept in the trail only
    annotated = ["ticket-00", "ticket-01", "ticket-02", "ticket-03", "ticket-04", "ticket-06"]
    assert ids(run, annotation="annotated") == annotated
    assert ids(run, annotation="disagree") == ["ticket-00", "ticket-01", "ticket-04"]
    assert ids(run, annotation="rated_fail") == ["ticket-00"]
    assert ids(run, annotation="rated_pass") == ["ticket-01", "ticket-02", "ticket-03"]
    assert ids(run, annotation="scored") == ["ticket-04", "ticket-06"]
    assert ids(run, annotation="commented") == ["ticket-00"]
    assert len(ids(run, annotation="unannotated")) == 6
    # against one criterion: ticket-00 failed reply_quality, so its fail rating agrees there;
    # ticket-06's 0.8 is 0.55 from its 0.25 there, but only 0.2 from exact_label's pass
    quality = ["ticket-03", "ticket-04", "ticket-06"]
    assert ids(run, annotation="disagree", criterion="reply_quality") == quality
    label = ["ticket-00", "ticket-01", "ticket-04"]
    assert ids(run, annotation="disagree", criterion="exact_label") == label
    assert set(ANNOTATION_FILTERS) == {
        "annotated",
        "disagree",
        "rated_pass",
        "rated_fail",
        "scored",
        "commented",
        "unannotated",
    }


def api(client: Client, token: str, method: str, path: str, body: Any = None) -> Any:
    headers = {"HTTP_AUTHORIZATION": f"Bearer {token}"}
    if method == "GET":
        return client.get(path, **headers)
    return client.post(path, json.dumps(body), content_type="application/json", **headers)


def test_the_api_reads_and_writes_annotations(run, teammate, viewer, token_for) -> None:
    client = Client()
    writer, reader = token_for(teammate), token_for(viewer)
    path = f"/api/runs/{run.pk}/annotations"
    made = api(
        client, writer, "POST", path, {"case_id": "ticket-03", "rating": "fail", "comment": "curt"}
    )
    assert made.status_code == 200, made.content
    assert made.json()["author"] == "bob"
    edited = api(
        client, writer, "POST", path, {"case_id": "ticket-03", "rating": None, "score": 0.5}
    )
    assert edited.json()["rating"] is None
    assert edited.json()["score"] == 0.5
    listed = api(client, reader, "GET", path).json()
    assert listed["count"] == 1
    assert listed["items"][0]["case_id"] == "ticket-03"
    changes = api(client, reader, "GET", f"{path}/changes?case_id=ticket-03").json()
    assert [(c["version"], c["rating"], c["comment"]) for c in changes] == [
        (1, "fail", "curt"),
        (2, None, ""),
    ]
    refused = api(client, reader, "POST", path, {"case_id": "ticket-03", "rating": "pass"})
    assert refused.status_code == 403
    assert "runner role" in refused.json()["detail"]
    bad = api(client, writer, "POST", path, {"case_id": "ticket-03", "score": 2})
    assert bad.status_code in (400, 422)
    missing = api(client, writer, "POST", path, {"case_id": "nope", "rating": "pass"})
    assert missing.status_code == 404


def test_the_case_page_shows_annotations_and_the_form_posts_with_csrf(
    run, teammate, viewer
) -> None:
    guarded = Client(enforce_csrf_checks=True)
    guarded.force_login(teammate)
    page = guarded.get(f"/runs/{run.pk}/cases/ticket-03")
    assert 'id="annotation-form"' in page.content.decode()
    token = page.cookies["csrftoken"].value
    without = guarded.post(
        f"/runs/{run.pk}/annotations", {"case_id": "ticket-03", "rating": "fail"}
    )
    assert without.status_code == 403
    posted = guarded.post(
        f"/runs/{run.pk}/annotations",
        {
            "case_id": "ticket-03",
            "rating": "fail",
            "comment": "<b>curt</b>",
            "csrfmiddlewaretoken": token,
        },
    )
    assert posted.status_code == 302
    assert posted["Location"] == f"/runs/{run.pk}/cases/ticket-03"
    shown = guarded.get(posted["Location"]).content.decode()
    assert "&lt;b&gt;curt&lt;/b&gt;" in shown
    assert "Every change (1)" in shown
    reader = Client()
    reader.force_login(viewer)
    read = reader.get(f"/runs/{run.pk}/cases/ticket-03").content.decode()
    assert "&lt;b&gt;curt&lt;/b&gt;" in read
    assert 'id="annotation-form"' not in read
    assert (
        reader.post(
            f"/runs/{run.pk}/annotations", {"case_id": "ticket-03", "rating": "pass"}
        ).status_code
        == 403
    )
