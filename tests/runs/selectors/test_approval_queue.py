"""The approvals queue: every recorded run with a gate and no standing decision waits in
the queue of those who may decide it; only a test's runs, flagged by the test harness,
stay out. The navigation's links and count follow the project role."""

from __future__ import annotations

from typing import Any

import pytest
from django.test import Client

import oloproof_core as engine
from oloproof import evaluate
from oloproof.evaluators import ExactMatch
from oloproof.testing import queue_approvals
from runs.errors import NotPermittedError
from runs.models import Run
from runs.selectors.gates import gates_pending, gates_to_decide
from runs.services import approval_create, approval_revoke
from runs.store import DjangoStore
from tests.runs.conftest import make_bot, support_rows

pytestmark = pytest.mark.django_db

POLICY: dict[str, Any] = {"version": 1, "rules": [{"metric": "exact_label", "min": 0.5}]}
EVALUATORS = [ExactMatch(criterion="exact_label", field="label")]


def recorded_as_the_demo_records() -> Run:
    """A run recorded through the engine and the store alone, as the demo, the workers
    and optimizations record theirs: no origin in its provenance."""
    result = engine.run_evaluation(
        system=make_bot(version="7"),
        dataset=support_rows(20),
        evaluators=EVALUATORS,
        store=DjangoStore(),
        policy=POLICY,
        isolation="thread",
    )
    run = Run.objects.get(pk=int(str(result.run_id)))
    assert "origin" not in run.provenance
    return run


def recorded_by_a_test(*, queued: bool) -> Run:
    """A run `evaluate()` records inside this test: the pytest plugin flags it."""

    def record(version: str) -> Any:
        bot, rows = make_bot(version=version), support_rows(20)
        store = DjangoStore()
        return evaluate(bot, rows, EVALUATORS, store=store, policy=POLICY, isolation="thread")

    if queued:
        with queue_approvals():
            result = record("8")
    else:
        result = record("9")
    return Run.objects.get(pk=int(str(result.run_id)))


def test_a_run_without_an_origin_waits_for_its_projects_approvers(approver, teammate) -> None:
    run = recorded_as_the_demo_records()
    assert [gate.run_id for gate in gates_pending(user=approver)] == [run.pk]
    assert [gate.run_id for gate in gates_to_decide(user=approver)] == [run.pk]
    assert list(gates_to_decide(user=teammate)) == []  # a runner may not decide
    approval_create(run=run, user=approver, decision="approve")
    assert list(gates_to_decide(user=approver)) == []


def test_only_the_test_harness_flag_keeps_a_gate_out_of_the_queue(approver) -> None:
    flagged = recorded_by_a_test(queued=False)
    asked = recorded_by_a_test(queued=True)
    assert flagged.provenance["origin"]["queue_approval"] is False
    assert [gate.run_id for gate in gates_to_decide(user=approver)] == [asked.pk]


def test_the_navigation_counts_the_gates_waiting_for_you_and_follows_roles(
    approver, teammate, viewer
) -> None:
    recorded_as_the_demo_records()
    pages = {}
    for user in (approver, teammate, viewer):
        client = Client()
        client.force_login(user)
        pages[user.username] = client.get("/").content.decode()
    assert 'id="gates-waiting"' in pages["alice"]
    assert '<span class="tag">approver</span>' in pages["alice"]
    assert ">New run</a>" in pages["alice"]
    assert ">New run</a>" in pages["bob"]
    assert 'id="gates-waiting"' not in pages["bob"]
    assert '<span class="tag">approver</span>' not in pages["bob"]
    assert ">New run</a>" not in pages["victor"]


def test_four_eyes_keep_the_submitter_from_deciding_or_revoking(approver, second_approver) -> None:
    run = recorded_as_the_demo_records()
    Run.objects.filter(pk=run.pk).update(created_by=approver)  # as run_submit records it
    run.refresh_from_db()
    assert list(gates_to_decide(user=approver)) == []
    assert [gate.run_id for gate in gates_pending(user=approver)] == [run.pk]
    approval_create(run=run, user=second_approver, decision="reject")
    with pytest.raises(NotPermittedError, match="submitted by you; another approver must revoke"):
        approval_revoke(run=run, user=approver, reason="I disagree")
    approval_revoke(run=run, user=second_approver, reason="decided too early")
