"""Runs tests: a real database (SQLite by default, PostgreSQL with DATABASE_URL) and a
fixed cast of users of the default project: an approver, a runner teammate who may not
decide gates, an outsider who is no member, and nobody (anonymous)."""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth.models import User
from django.core.cache import cache
from django.test import Client

from oloproof import evaluate
from oloproof.evaluators import ExactMatch, evaluator
from oloproof.testing import queue_approvals
from oloproof_core.results.result import Result
from runs.access import LOCAL
from runs.store import DjangoStore
from runs.writers.projects import membership_set, project_ensure
from runs.writers.tokens import api_token_create


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


def member(username: str, role: str | None, *, project: str = "default") -> User:
    """A new account with `role` in `project` (none when `role` is None)."""
    user = User.objects.create_user(username=username, password="a-long-test-password")
    if role is not None:
        membership_set(by=LOCAL, project=project_ensure(slug=project), user=user, role=role)
    return User.objects.get(pk=user.pk)


@pytest.fixture
def approver(db: None) -> User:
    return member("alice", "approver")


@pytest.fixture
def second_approver(db: None) -> User:
    return member("carol", "approver")


@pytest.fixture
def teammate(db: None) -> User:
    return member("bob", "runner")


@pytest.fixture
def viewer(db: None) -> User:
    return member("victor", "viewer")


@pytest.fixture
def viewer_client(viewer: User) -> Client:
    """A browser session signed in as a viewer of the default project."""
    client = Client()
    client.force_login(viewer)
    return client


def compare_grid(client: Client, pair: tuple[Any, Any], **params: str) -> Any:
    """The compare page of a (baseline, candidate) pair of runs, with `params`."""
    baseline, candidate = pair
    return client.get("/compare/", {"baseline": baseline.pk, "candidate": candidate.pk, **params})


@pytest.fixture(autouse=True)
def _forget_token_failures() -> None:
    """Wrong-token counts live in the cache; each test starts with none."""
    cache.clear()


@pytest.fixture
def outsider(db: None) -> User:
    return member("mallory", None)


@pytest.fixture
def token_for(db: None) -> Any:
    def issue(user: User) -> str:
        return api_token_create(user=user, name="tests")[1]

    return issue
