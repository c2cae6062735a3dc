"""Final decisions: one per gate, changed only by an audited revocation, four eyes by default."""

from __future__ import annotations

import json

import pytest
from django.test import Client

from runs.access import LOCAL
from runs.errors import ConflictError, InvalidRequestError, NotPermittedError
from runs.models import Approval, ApprovalRevocation, Run
from runs.selectors.gates import baseline_run_find, standing_decision
from runs.services import approval_create, approval_revoke
from runs.writers.projects import project_ensure
from runs.writers.recording import gate_record
from runs.writers.tokens import api_token_create
from tests.runs.conftest import record_evaluation

pytestmark = pytest.mark.django_db


def gated_run(outcome: str = "pass", **kwargs: object) -> Run:
    run = Run.objects.select_related("project").get(pk=int(record_evaluation(4).run_id))
    gate_record(run=run, gate={"outcome": outcome, "summary": outcome, "rules": []})
    if kwargs:
        Run.objects.filter(pk=run.pk).update(**kwargs)
        run.refresh_from_db()
    return run


def test_a_gate_takes_one_decision_and_a_second_is_refused(approver, second_approver) -> None:
    run = gated_run()
    approval_create(run=run, user=approver, decision="approve")
    for user, decision in (
        (approver, "approve"),
        (approver, "reject"),
        (second_approver, "reject"),
    ):
        with pytest.raises(ConflictError, match="already has its decision"):
            approval_create(run=run, user=user, decision=decision)
    assert Approval.objects.count() == 1


def test_a_change_is_a_revocation_naming_its_reason(approver, second_approver) -> None:
    run = gated_run()
    first = approval_create(run=run, user=approver, decision="approve")
    with pytest.raises(InvalidRequestError, match="reason"):
        approval_revoke(run=run, user=second_approver, reason="  ")
    revocation = approval_revoke(run=run, user=second_approver, reason="the dataset was stale")
    assert (revocation.approval, revocation.user, revocation.reason) == (
        first,
        second_approver,
        "the dataset was stale",
    )
    assert standing_decision(run=run) is None
    rejected = approval_create(run=run, user=second_approver, decision="reject")
    assert standing_decision(run=run) == rejected
    assert [a.sequence for a in Approval.objects.order_by("sequence")] == [0, 1]
    with pytest.raises(InvalidRequestError, match="no decision to revoke"):
        approval_revoke(run=gated_run(), user=approver, reason="nothing there")


def test_revocations_are_immutable(approver) -> None:
    run = gated_run()
    approval_create(run=run, user=approver, decision="approve")
    revocation = approval_revoke(run=run, user=approver, reason="mistake")
    revocation.reason = "rewritten"
    with pytest.raises(Exception, match="immutable"):
        revocation.save()
    with pytest.raises(Exception, match="immutable"):
        ApprovalRevocation.objects.all().delete()


def test_last_approved_follows_only_standing_approvals(approver) -> None:
    first = gated_run()
    second = gated_run()
    approval_create(run=first, user=approver, decision="approve")
    approval_create(run=second, user=approver, decision="approve")
    project_id = first.project_id
    assert baseline_run_find(project_id=project_id, system_name="support-bot") == second
    approval_revoke(run=second, user=approver, reason="regressed in production")
    assert baseline_run_find(project_id=project_id, system_name="support-bot") == first
    approval_create(run=second, user=approver, decision="reject")
    assert baseline_run_find(project_id=project_id, system_name="support-bot") == first


def test_four_eyes_an_approver_cannot_decide_their_own_run(approver, second_approver) -> None:
    run = gated_run(created_by=approver)
    with pytest.raises(NotPermittedError, match="four eyes"):
        approval_create(run=run, user=approver, decision="approve")
    approval_create(run=run, user=second_approver, decision="approve")


def test_a_project_may_allow_deciding_ones_own_run(approver) -> None:
    project_ensure(slug="default", allow_self_approval=True)
    run = gated_run(created_by=approver)
    run.project.refresh_from_db()
    assert approval_create(run=run, user=approver, decision="approve").user == approver


def test_the_process_itself_cannot_decide(approver) -> None:
    with pytest.raises(NotPermittedError, match="by a person"):
        approval_create(run=gated_run(), user=LOCAL, decision="approve")


def test_the_api_answers_a_second_decision_409_and_records_revocations(
    approver, second_approver
) -> None:
    run = gated_run()
    client = Client()

    def post(user: object, path: str, body: dict[str, object]) -> object:
        token = api_token_create(user=user)[1]  # type: ignore[arg-type]
        return client.post(
            path,
            json.dumps(body),
            content_type="application/json",
            HTTP_AUTHORIZATION=f"Bearer {token}",
        )

    approvals = f"/api/runs/{run.pk}/approvals"
    assert post(approver, approvals, {"decision": "approve"}).status_code == 201  # type: ignore[attr-defined]
    assert post(second_approver, approvals, {"decision": "reject"}).status_code == 409  # type: ignore[attr-defined]
    revoked = post(second_approver, f"/api/runs/{run.pk}/revocations", {"reason": "too early"})
    assert revoked.status_code == 201  # type: ignore[attr-defined]
    gate = client.get(
        f"/api/runs/{run.pk}/gate",
        HTTP_AUTHORIZATION=f"Bearer {api_token_create(user=approver)[1]}",
    ).json()
    assert [(a["decision"], a["standing"]) for a in gate["approvals"]] == [("approve", False)]
    assert gate["approvals"][0]["revocation"]["reason"] == "too early"
