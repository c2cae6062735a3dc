"""Dashboard security: no route answers an anonymous visitor, and forms need the CSRF token.

The route list is read from the URL resolver, so a page or API route added later is
covered without touching this file.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest
from django.test import Client
from django.urls import URLPattern, URLResolver, get_resolver

from runs.models import Approval, Run
from runs.writers.recording import gate_record
from tests.runs.conftest import record_evaluation

pytestmark = pytest.mark.django_db

OPEN_ROUTES = {
    "login": "signing in is how a visitor becomes a user",
    "logout": "signing out needs no account",
    "admin:login": "the admin's own sign-in form",
    "admin:logout": "signing out of the admin",
}
LOGIN_PREFIXES = ("/accounts/login/", "/admin/login/")

_CONVERTER = re.compile(r"<(?:(?P<kind>\w+):)?(?P<name>\w+)>")
_REGEX_GROUP = re.compile(r"\(\?P<\w+>[^)]*\)")


def _sample(part: str) -> str:
    """A concrete path for one pattern fragment: every parameter becomes 1."""
    part = _CONVERTER.sub("1", part)
    part = _REGEX_GROUP.sub("1", part)
    return part.replace("^", "").replace("$", "").replace("\\", "")


def _routes(
    patterns: list[URLPattern | URLResolver], prefix: str = "", namespace: str = ""
) -> Iterator[tuple[str, str]]:
    for entry in patterns:
        fragment = _sample(str(entry.pattern))
        if isinstance(entry, URLResolver):
            inner = f"{namespace}{entry.namespace}:" if entry.namespace else namespace
            yield from _routes(entry.url_patterns, prefix + fragment, inner)
        else:
            yield f"{namespace}{entry.name or ''}", "/" + prefix + fragment


ROUTES = sorted(set(_routes(get_resolver().url_patterns)))


def test_the_resolver_lists_the_dashboard_and_the_api() -> None:
    names = {name for name, _ in ROUTES}
    assert {"runs:list", "runs:detail", "runs:case", "runs:compare", "runs:gates"} <= names
    assert any(path.startswith("/api/") for _, path in ROUTES)


@pytest.mark.parametrize(("name", "path"), ROUTES, ids=[f"{n}={p}" for n, p in ROUTES])
def test_every_route_refuses_anonymous_visitors(name: str, path: str, request) -> None:
    if name in OPEN_ROUTES:
        pytest.skip(f"{name} is open by design: {OPEN_ROUTES[name]}")
    client = Client()
    for method in ("get", "post"):
        response = getattr(client, method)(path)
        if response.status_code == 405:
            continue
        if response.status_code == 404:
            # A route that shows nothing to anybody (the API's bare root) refuses no one.
            signed_in = Client()
            signed_in.force_login(request.getfixturevalue("approver"))
            assert getattr(signed_in, method)(path).status_code == 404, (method, path)
        elif response.status_code == 302:
            assert response["Location"].startswith(LOGIN_PREFIXES), (method, path)
        else:
            assert response.status_code in (401, 403), (method, path, response.status_code)
        assert b"support-bot" not in response.content


def test_static_files_are_served_but_nothing_else() -> None:
    client = Client(raise_request_exception=False)
    assert client.get("/static/oloproof.css").status_code == 200
    assert client.get("/static/vendor/plotly-basic.min.js").status_code == 200
    assert client.get("/static/../evalsite/settings.py").status_code in (400, 404)
    assert client.get("/static/vendor/../../evalsite/settings.py").status_code in (400, 404)


@pytest.fixture
def gated_run() -> Run:
    run = Run.objects.get(pk=int(record_evaluation(6).run_id))
    gate_record(run=run, gate={"outcome": "pass", "summary": "gate PASS", "rules": []})
    return run


def test_a_decision_without_the_csrf_token_is_refused(approver, gated_run) -> None:
    client = Client(enforce_csrf_checks=True)
    client.force_login(approver)
    response = client.post(f"/runs/{gated_run.pk}/decide", {"decision": "approve"})
    assert response.status_code == 403
    assert Approval.objects.count() == 0
    # The same form with its token goes through.
    page = client.get(f"/runs/{gated_run.pk}/")
    token = re.search(rb'name="csrfmiddlewaretoken" value="([^"]+)"', page.content)
    assert token is not None
    response = client.post(
        f"/runs/{gated_run.pk}/decide",
        {"decision": "approve", "csrfmiddlewaretoken": token.group(1).decode()},
    )
    assert response.status_code == 302
    assert Approval.objects.count() == 1


@pytest.mark.parametrize(
    "path", ["/runs/new/", "/accounts/login/", "/accounts/logout/", "/api/runs/1/approvals"]
)
def test_other_forms_refuse_a_post_without_the_token(approver, path) -> None:
    client = Client(enforce_csrf_checks=True)
    client.force_login(approver)
    response = client.post(path, {"username": "alice", "password": "a-long-test-password"})
    assert response.status_code == 403
