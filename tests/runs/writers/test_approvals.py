"""Approvals: who may decide a gate, overrides need a reason, and records never change."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import AnonymousUser

from runs.errors import (
    ImmutableRecordError,
    InvalidRequestError,
    NotFoundError,
    NotPermittedError,
)
from runs.models import Approval, Run
from runs.services import approval_create, approval_revoke
from runs.writers.recording import gate_record
from tests.runs.conftest import record_evaluation

pytestmark = pytest.mark.django_db


def gated_run(outcome: str) -> Run:
    run = Run.objects.get(pk=int(record_evaluation(6).run_id))
    gate_record(run=run, gate={"outcome": outcome, "summary": f"gate {outcome}", "rules": []})
    return run


def test_an_approver_approves_a_passed_gate(approver) -> None:
    run = gated_run("pass")
    approval = approval_create(run=run, user=approver, decision="approve", comment="ship it")
    assert (approval.decision, approval.override, approval.gate_outcome) == (
        "approve",
        False,
        "pass",
    )


@pytest.mark.parametrize("user_fixture", ["teammate", "outsider"])
def test_users_without_the_approver_role_cannot_decide(request, user_fixture) -> None:
    run = gated_run("pass")
    user = request.getfixturevalue(user_fixture)
    refused = NotPermittedError if user_fixture == "teammate" else NotFoundError
    with pytest.raises(refused, match=r"approver role|no project"):
        approval_create(run=run, user=user, decision="approve")
    with pytest.raises(NotPermittedError):
        approval_create(run=run, user=AnonymousUser(), decision="reject")
    assert Approval.objects.count() == 0


@pytest.mark.parametrize("outcome", ["fail", "inconclusive"])
def test_approving_an_unpassed_gate_is_an_override_with_a_reason(approver, outcome) -> None:
    run = gated_run(outcome)
    with pytest.raises(InvalidRequestError, match="override"):
        approval_create(run=run, user=approver, decision="approve", comment="fine")
    with pytest.raises(InvalidRequestError, match="reason"):
        approval_create(run=run, user=approver, decision="approve", override=True, comment=" ")
    approval = approval_create(
        run=run, user=approver, decision="approve", override=True, comment="known flaky rule"
    )
    assert approval.override
    assert approval.gate_outcome == outcome
    # Rejecting never needs an override (once the approval is revoked: one decision stands).
    approval_revoke(run=run, user=approver, reason="approved too early")
    approval_create(run=run, user=approver, decision="reject")


def test_a_run_without_a_gate_cannot_be_approved(approver) -> None:
    run = Run.objects.get(pk=int(record_evaluation(4).run_id))
    with pytest.raises(InvalidRequestError, match="no gate"):
        approval_create(run=run, user=approver, decision="approve")


def test_approvals_are_immutable(approver) -> None:
    run = gated_run("pass")
    approval = approval_create(run=run, user=approver, decision="approve", comment="ok")
    approval.comment = "rewritten"
    with pytest.raises(ImmutableRecordError):
        approval.save()
    with pytest.raises(ImmutableRecordError):
        approval.delete()
    with pytest.raises(ImmutableRecordError):
        Approval.objects.filter(pk=approval.pk).update(comment="rewritten")
    with pytest.raises(ImmutableRecordError):
        Approval.objects.all().delete()
    assert Approval.objects.get(pk=approval.pk).comment == "ok"


def test_a_run_with_approvals_cannot_be_deleted(approver) -> None:
    from django.db.models import ProtectedError

    run = gated_run("pass")
    approval_create(run=run, user=approver, decision="approve")
    with pytest.raises(ProtectedError):
        run.delete()
