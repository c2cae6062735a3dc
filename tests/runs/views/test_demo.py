"""`oloproof demo` records a history with something true on every page, exactly once."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User

from runs.access import role_allows, role_of
from runs.management.demo import APPROVER, VIEWER, demo_record, demo_users_ensure
from runs.models import Approval, Membership, Run
from runs.writers.projects import project_default_ensure

# The demo is the embedded default's: the PostgreSQL pass has nothing to add.
# Records three releases: the quick pass leaves it to CI (and to scripts/demo.sh).
pytestmark = [pytest.mark.django_db, pytest.mark.one_database, pytest.mark.slow]


def test_the_demo_is_recorded_once_with_gates_failures_and_missing_cases() -> None:
    assert demo_record() == 3
    assert demo_record() == 0
    runs = list(Run.objects.order_by("created_at").select_related("release", "gate"))
    assert [run.release.version for run in runs] == ["1.0", "1.1", "2.0"]
    assert [run.gate.outcome for run in runs] == ["pass", "fail", "pass"]
    assert runs[0].case_results.filter(outcome="failed").exists()
    assert runs[1].case_results.filter(outcome="missing").count() > 0
    assert runs[1].metrics.filter(metric="reply_quality.politeness").exists()
    assert Approval.objects.get().gate.run == runs[0]
    assert all("evaluators" in run.config for run in runs)


def test_the_demo_users_have_exactly_their_roles_in_the_default_project() -> None:
    demo_users_ensure()
    demo_users_ensure()
    approver = User.objects.get(username=APPROVER.username)
    viewer = User.objects.get(username=VIEWER.username)
    project = project_default_ensure()
    assert approver.check_password(APPROVER.password)
    assert role_of(user=approver, project=project) == "approver"
    assert viewer.check_password(VIEWER.password)
    assert role_of(user=viewer, project=project) == "viewer"
    assert not role_allows(user=viewer, project=project, role="runner")
    assert Membership.objects.count() == 2
