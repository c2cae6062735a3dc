"""The labels API: label, list, calibration and the review queue's next case; 422 for a
value the metric does not take, 403 for a viewer, 404 for another project's run."""

from __future__ import annotations

import json
from typing import Any

import pytest
from django.test import Client

from runs.models import Label, Run
from tests.support.case_runs import ticket_run

pytestmark = pytest.mark.django_db


@pytest.fixture
def run() -> Run:
    return ticket_run()


def call(token: str, method: str, path: str, body: Any = None) -> Any:
    headers = {"HTTP_AUTHORIZATION": f"Bearer {token}"}
    if method == "GET":
        return Client().get(path, **headers)
    return Client().post(path, json.dumps(body), content_type="application/json", **headers)


def test_people_label_through_the_api_and_read_labels_calibration_and_queue(
    run, teammate, approver, viewer, token_for
) -> None:
    bob, alice, victor = token_for(teammate), token_for(approver), token_for(viewer)
    path = f"/api/runs/{run.pk}/labels"
    made = call(
        bob,
        "POST",
        path,
        {"case_id": "ticket-03", "metric": "exact_label", "value": "fail", "note": "off"},
    )
    assert made.status_code == 200, made.content
    assert {k: made.json()[k] for k in ("case_id", "metric", "value", "note", "author")} == {
        "case_id": "ticket-03",
        "metric": "exact_label",
        "value": 0.0,
        "note": "off",
        "author": "bob",
    }
    assert (
        call(
            alice, "POST", path, {"case_id": "ticket-03", "metric": "exact_label", "value": True}
        ).status_code
        == 200
    )
    listed = call(victor, "GET", f"{path}?metric=exact_label").json()
    assert listed["count"] == 1
    [case] = listed["items"]
    assert case["case_id"] == "ticket-03"
    assert [(item["author"], item["value"]) for item in case["labels"]] == [
        ("bob", 0.0),
        ("alice", 1.0),
    ]
    assert case["people_disagree"] is True

    queue = call(victor, "GET", f"/api/runs/{run.pk}/review/reply_quality/next").json()
    assert queue["case_id"] is not None
    assert queue["case_id"] != "ticket-05"
    assert queue["judge_feedback"]
    assert queue["labelled"] is None
    blind = call(victor, "GET", f"/api/runs/{run.pk}/review/reply_quality/next?blind=true").json()
    assert (blind["case_id"], blind["judge_value"], blind["judge_feedback"]) == (
        queue["case_id"],
        None,
        None,
    )
    labelled = call(
        bob, "POST", path, {"case_id": queue["case_id"], "metric": "reply_quality", "value": 0.75}
    )
    assert labelled.status_code == 200
    figures = call(victor, "GET", f"/api/runs/{run.pk}/metrics/reply_quality/calibration").json()
    assert figures["judge_only"]["method"]
    assert figures["labelled"]["n_labels"] >= 1
    assert figures["calibration"]["n"] == 1
    assert figures["labels_needed"] is not None
    following = call(victor, "GET", f"/api/runs/{run.pk}/review/reply_quality/next").json()
    assert following["position"] > queue["position"]


def test_bad_input_is_422_in_the_schemas_shape_and_nothing_is_stored(
    run, teammate, viewer, outsider, token_for
) -> None:
    bob = token_for(teammate)
    path = f"/api/runs/{run.pk}/labels"
    for body, field, message in (
        (
            {"case_id": "ticket-01", "metric": "reply_quality", "value": 3},
            "value",
            "give a number from 0 to 1",
        ),
        (
            {"case_id": "ticket-01", "metric": "exact_label", "value": "maybe"},
            "value",
            "give pass or fail",
        ),
        (
            {"case_id": "ticket-05", "metric": "exact_label", "value": "pass"},
            "case_id",
            "has no output to label",
        ),
    ):
        refused = call(bob, "POST", path, body)
        assert refused.status_code == 422, refused.content
        [problem] = refused.json()["detail"]
        assert problem["loc"] == ["body", "payload", field]
        assert message in problem["msg"]
    schema = call(bob, "POST", path, {"case_id": "ticket-01", "metric": "exact_label"})
    assert schema.status_code == 422
    assert schema.json()["detail"][0]["loc"][-1] == "value"
    assert (
        call(
            bob, "POST", path, {"case_id": "nope", "metric": "exact_label", "value": 1}
        ).status_code
        == 404
    )
    assert (
        call(bob, "POST", path, {"case_id": "ticket-01", "metric": "tone", "value": 1}).status_code
        == 404
    )
    viewer_says = call(
        token_for(viewer),
        "POST",
        path,
        {"case_id": "ticket-01", "metric": "exact_label", "value": 1},
    )
    assert viewer_says.status_code == 403
    assert "runner role" in viewer_says.json()["detail"]
    stranger = token_for(outsider)
    assert (
        call(
            stranger, "POST", path, {"case_id": "ticket-01", "metric": "exact_label", "value": 1}
        ).status_code
        == 404
    )
    for read in (
        f"{path}?metric=exact_label",
        f"/api/runs/{run.pk}/metrics/exact_label/calibration",
        f"/api/runs/{run.pk}/review/exact_label/next",
    ):
        assert call(stranger, "GET", read).status_code == 404, read
    bad_width = call(bob, "GET", f"/api/runs/{run.pk}/metrics/exact_label/calibration?width=-1")
    assert bad_width.status_code == 422
    assert Label.objects.count() == 0
