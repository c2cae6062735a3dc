"""Signing in: lockout after wrong passwords, a limit on wrong tokens, token expiry, 401s,
the Content-Security-Policy with nonces for the charts, and bidi-isolated names."""

from __future__ import annotations

import re
from datetime import timedelta

import pytest
from django.test import Client
from django.utils import timezone

from runs.models import ApiToken
from runs.writers.tokens import api_token_create
from tests.runs.conftest import record_evaluation

pytestmark = pytest.mark.django_db
PASSWORD = "a-long-test-password"


def test_repeated_wrong_passwords_lock_the_sign_in(approver, settings) -> None:
    client = Client()
    answers = [
        client.post("/accounts/login/", {"username": "alice", "password": "wrong"}).status_code
        for _ in range(settings.AXES_FAILURE_LIMIT)
    ]
    # The form again with its error, until the limit is reached.
    assert answers == [200] * (settings.AXES_FAILURE_LIMIT - 1) + [429]
    locked = client.post("/accounts/login/", {"username": "alice", "password": PASSWORD})
    assert locked.status_code == 429
    assert "_auth_user_id" not in client.session


def test_a_right_password_before_the_limit_signs_in(approver) -> None:
    client = Client()
    client.post("/accounts/login/", {"username": "alice", "password": "wrong"})
    signed_in = client.post("/accounts/login/", {"username": "alice", "password": PASSWORD})
    assert signed_in.status_code == 302
    assert client.session["_auth_user_id"] == str(approver.pk)


def test_wrong_tokens_are_limited_per_address(viewer, settings) -> None:
    settings.OLOPROOF_TOKEN_FAILURES = 5
    good = api_token_create(user=viewer)[1]
    client = Client()
    answers = [
        client.get("/api/runs", HTTP_AUTHORIZATION=f"Bearer olo_guess{i}").status_code
        for i in range(8)
    ]
    assert answers == [401] * 5 + [429] * 3
    # Past the limit even a right token waits out the window from that address.
    assert client.get("/api/runs", HTTP_AUTHORIZATION=f"Bearer {good}").status_code == 429
    other = Client(REMOTE_ADDR="10.0.0.9")
    assert other.get("/api/runs", HTTP_AUTHORIZATION=f"Bearer {good}").status_code == 200


def test_tokens_expire(viewer) -> None:
    record, token = api_token_create(user=viewer)
    assert record.expires_at is not None
    assert record.expires_at > timezone.now() + timedelta(days=80)
    ApiToken.objects.filter(pk=record.pk).update(expires_at=timezone.now())
    assert Client().get("/api/runs", HTTP_AUTHORIZATION=f"Bearer {token}").status_code == 401


def test_an_unauthenticated_post_is_401_not_a_csrf_failure() -> None:
    client = Client(enforce_csrf_checks=True)
    for path in ("/api/runs", "/api/runs/1/approvals", "/api/runs/1/revocations"):
        response = client.post(path, "{}", content_type="application/json")
        assert response.status_code == 401, (path, response.content)


def test_pages_carry_a_csp_and_the_chart_scripts_its_nonce(viewer) -> None:
    run = record_evaluation(6)
    client = Client()
    client.force_login(viewer)
    page = client.get(f"/runs/{run.run_id}/")
    policy = page["Content-Security-Policy"]
    nonce = re.search(r"'nonce-([^']+)'", policy)
    assert nonce is not None
    assert "script-src 'self' 'nonce-" in policy
    assert "'unsafe-inline'" not in policy.split("script-src")[1].split(";")[0]
    scripts = re.findall(r"<script([^>]*)>", page.content.decode())
    inline = [attrs for attrs in scripts if "src=" not in attrs]
    assert inline, "the run page has its chart's inline script"
    assert all(f'nonce="{nonce.group(1)}"' in attrs for attrs in inline)


def test_right_to_left_overrides_in_names_are_isolated_and_shown(viewer) -> None:
    from oloproof import evaluate, system
    from oloproof.evaluators import ExactMatch
    from runs.store import DjangoStore

    @system(name="bot\u202egpj.exe", version="1")
    def spoof(case: dict[str, str]) -> dict[str, str]:
        return {"label": "x"}

    result = evaluate(
        spoof,
        [{"id": "case\u202e1", "input": {"q": "x"}, "expected": {"label": "x"}}],
        [ExactMatch(field="label")],
        store=DjangoStore(),
    )
    client = Client()
    client.force_login(viewer)
    for path in (f"/runs/{result.run_id}/", f"/runs/{result.run_id}/cases/", "/systems/"):
        html = client.get(path).content.decode()
        assert "\u202e" not in html, path
        assert "bot⟨U+202E⟩gpj.exe" in html, path
    assert "<bdi>bot⟨U+202E⟩gpj.exe</bdi>" in client.get("/systems/").content.decode()
