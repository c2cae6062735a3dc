"""Runs tests: a real database (SQLite by default, PostgreSQL with DATABASE_URL) and a
fixed cast of users: an approver, a teammate without the approval permission, an
outsider with no permissions, and nobody (anonymous)."""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth.models import Permission, User

from oloproof import evaluate
from oloproof.evaluators import ExactMatch, evaluator
from oloproof.testing import queue_approvals
from oloproof_core.result import Result
from runs.services import api_token_create
from runs.store import DjangoStore


def support_rows(n: int, *, wrong_every: int = 0, version_tag: str = "") -> list[dict[str, Any]]:
    rows = []
    for i in range(n):
        label = "refund" if i % 2 == 0 else "other"
        rows.append(
            {
                "id": f"case_{i:05d}",
                "input": {"question": f"{'refund' if label == 'refund' else 'parcel'} #{i}"},
                "expected": {"label": label},
                "cluster": f"user_{i % 7}",
            }
        )
    return rows


@evaluator(criterion="short_answer", reads=("output",))
def short_answer(case: Any) -> bool:
    return len(case.output["label"]) <= 6


def make_bot(*, version: str, broken_every: int = 0, wrong_every: int = 0) -> Any:
    from oloproof import system

    @system(name="support-bot", version=version)
    def answer(case: dict[str, Any]) -> dict[str, str]:
        number = int(case["question"].split("#")[1])
        if broken_every and number % broken_every == 0:
            raise RuntimeError(f"backend down on case {number}")
        label = "refund" if "refund" in case["question"] else "other"
        if wrong_every and number % wrong_every == 1:
            label = "other" if label == "refund" else "refund"
        return {"label": label}

    return answer


def record_evaluation(
    n: int = 20, *, version: str = "1", broken_every: int = 0, wrong_every: int = 0, **kwargs: Any
) -> Result:
    # These stand for releases people evaluate, so their gates wait for approval as theirs
    # would, though they are recorded from tests.
    with queue_approvals():
        return evaluate(
            make_bot(version=version, broken_every=broken_every, wrong_every=wrong_every),
            support_rows(n),
            [ExactMatch(criterion="exact_label", field="label"), short_answer],
            store=DjangoStore(),
            concurrency=1,
            **kwargs,
        )


def _user(username: str, *perms: str) -> User:
    user = User.objects.create_user(username=username, password="a-long-test-password")
    for codename in perms:
        user.user_permissions.add(Permission.objects.get(codename=codename))
    return User.objects.get(pk=user.pk)


@pytest.fixture
def approver(db: None) -> User:
    return _user("alice", "approve_gate", "add_run")


@pytest.fixture
def teammate(db: None) -> User:
    return _user("bob", "add_run")


@pytest.fixture
def outsider(db: None) -> User:
    return _user("mallory")


@pytest.fixture
def token_for(db: None) -> Any:
    def issue(user: User) -> str:
        return api_token_create(user=user, name="tests")[1]

    return issue
