"""The permission matrix: every route, every kind of caller, nothing of another project leaks.

The routes are read from the URL resolver (dashboard pages) and from the OpenAPI
schema (API operations), so a route added later is covered without touching this
file. Project "alpha" holds the records; the callers are nobody, an account with no
membership, and a viewer, runner, approver and admin of project "beta". None of them
may read anything of alpha's (its names and ids never appear in a response) or change
anything (no decision, revocation or run is recorded), whatever they ask.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.test import Client
from django.urls import URLPattern, URLResolver, get_resolver

from evalsite.api import api
from oloproof import current_case, evaluate, system
from oloproof.evaluators import ExactMatch
from oloproof_core.optimize import CandidateRecord
from runs.access import LOCAL
from runs.models import (
    ApiToken,
    Approval,
    ApprovalRevocation,
    CaseAnnotation,
    CaseAnnotationChange,
    Change,
    CodeRoot,
    Label,
    Membership,
    Run,
    RunKeeping,
    RunTag,
)
from runs.store import DjangoStore
from runs.writers.annotations import AnnotationValues, case_annotation_save
from runs.writers.labels import save_label
from runs.writers.optimization_records import (
    candidate_record,
    optimization_conclude_record,
    optimization_create,
)
from runs.writers.projects import code_root_register, project_ensure
from runs.writers.recording import gate_record
from runs.writers.tokens import api_token_create
from tests.runs.conftest import member

# Every record against every caller: the quick pass leaves the whole matrix to CI; the
# access helper itself is run by every page and API test.
pytestmark = [pytest.mark.django_db, pytest.mark.slow]

SECRET = "alpha-secret"
OPEN_ROUTES = {"login", "logout", "admin:login", "admin:logout"}
ADMIN_SITE = "admin:"
"""Django's admin site: staff only (none of the callers is staff), checked by Django."""
SETTINGS_ACTIONS = (
    "runs:member_set",
    "runs:member_remove",
    "runs:code_root_add",
    "runs:code_root_remove",
    "runs:account_active",
    "runs:account_password",
    "runs:token_revoke",
    "runs:rename",
    "runs:tags",
    "runs:hide",
    "runs:delete",
)
"""POST-only settings and run-keeping actions, checked in tests/browser/test_settings.py
and tests/browser/test_run_keeping.py."""
CALLERS = ("anonymous", "outsider", "viewer", "runner", "approver", "admin")


@system(name=f"{SECRET}-bot", version="1")
def secret_bot(case: dict[str, Any]) -> dict[str, str]:
    current_case().step("looked up", {"q": case["q"]})  # a transcript, read through access too
    return {"label": case["q"]}


def alpha_run(version: str = "1") -> Run:
    rows = [
        {"id": f"{SECRET}-{i}", "input": {"q": f"{SECRET} q{i}"}, "expected": {"label": "x"}}
        for i in range(4)
    ]
    result = evaluate(
        secret_bot,
        rows,
        [ExactMatch(criterion=f"{SECRET}_metric", field="label")],
        store=DjangoStore(project="alpha"),
        concurrency=1,
        isolation="thread",  # what is checked is who reads the record, not how it was made
    )
    return Run.objects.select_related("release__system").get(pk=int(result.run_id))


@pytest.fixture
def world(tmp_path: Any) -> dict[str, Any]:
    alpha = project_ensure(slug="alpha", name=f"{SECRET} project")
    beta = project_ensure(slug="beta")
    code_root_register(by=LOCAL, project=alpha, path=str(tmp_path))
    first, second = alpha_run(), alpha_run()
    gate_record(run=first, gate={"outcome": "pass", "summary": SECRET, "rules": []})
    gate_record(run=second, gate={"outcome": "pass", "summary": SECRET, "rules": []})
    alpha_admin = member("alpha-admin", "admin", project="alpha")
    decider = member("alpha-approver", "approver", project="alpha")
    Approval.objects.create(
        gate=first.gate, user=decider, decision="approve", gate_outcome="pass", comment=SECRET
    )
    case_annotation_save(
        user=alpha_admin,
        run=first,
        case_id=f"{SECRET}-0",
        values=AnnotationValues(rating="fail", comment=SECRET),
    )
    save_label(alpha_admin, first.pk, f"{SECRET}-0", f"{SECRET}_metric", "fail", note=SECRET)
    optimization = optimization_create(
        project=alpha,
        config={"system": f"{SECRET}-bot:answer", "dataset": "d.jsonl", "metric": "m.py"},
    )
    # What the optimization's own worker writes once it has loaded the system.
    type(optimization).objects.filter(pk=optimization.pk).update(system_name=f"{SECRET}-bot")
    # Its seed, which stayed the winner: what the winner's download reads.
    candidate_record(
        optimization_id=optimization.pk,
        record=CandidateRecord(
            index=0,
            digest="0" * 64,
            version=f"1+opt{optimization.pk}.0",
            texts={"prompt": f"{SECRET} prompt"},
            parents=(),
            origin="seed",
            val={"metric": "exact", "estimate": None, "n": 0, "n_missing": 2},
            cost_usd=None,
            latency_ms=None,
        ),
    )
    optimization_conclude_record(
        optimization_id=optimization.pk, status="succeeded", outcome={"winner": 0}
    )
    callers: dict[str, User | None] = {"anonymous": None, "outsider": member("nobody", None)}
    for role in ("viewer", "runner", "approver", "admin"):
        callers[role] = member(f"beta-{role}", role, project="beta")
    return {
        "alpha": alpha,
        "beta": beta,
        "runs": (first, second),
        "optimization": optimization,
        "callers": callers,
        "alpha_admin": alpha_admin,
        "alpha_token": api_token_create(user=alpha_admin, name=SECRET, project=alpha)[0],
    }


def _fill(path: str, world: dict[str, Any]) -> str:
    first, second = world["runs"]
    filled = (
        path.replace("<int:run_id>", str(first.pk))
        .replace("{run_id}", str(first.pk))
        .replace("<int:system_id>", str(first.release.system_id))
        .replace("<path:case_id>", f"{SECRET}-0")
        .replace("<int:optimization_id>", str(world["optimization"].pk))
        .replace("{optimization_id}", str(world["optimization"].pk))
        .replace("<path:metric>", f"{SECRET}_metric")
        .replace("<str:metric>", f"{SECRET}_metric")
        .replace("{metric}", f"{SECRET}_metric")
        .replace("<slug:slug>", "alpha")
        .replace("<int:account_id>", str(world["alpha_admin"].pk))
        .replace("<int:token_id>", str(world["alpha_token"].pk))
    )
    pair = filled.rstrip("/").endswith(("compare", "compare/cases", "compare/export"))
    if pair or "/compare/case/" in filled:
        filled += f"?baseline={first.pk}&candidate={second.pk}"
    elif filled.endswith("compare/runs"):
        filled += f"?runs={first.pk}&runs={second.pk}"
    elif filled.endswith("/verdicts"):
        filled += f"?criterion={SECRET}_metric"
    elif filled.endswith(("/annotations", "/annotations/changes", "/transcript")) and (
        "/api/" in filled
    ):
        filled += f"?case_id={SECRET}-0"
    elif filled.endswith("/labels") and "/api/" in filled:
        filled += f"?metric={SECRET}_metric"
    elif filled.endswith("status.json"):
        filled += f"?ids={first.pk},{second.pk}"
    return filled


def _page_routes(
    patterns: list[URLPattern | URLResolver], prefix: str = "", namespace: str = ""
) -> Iterator[tuple[str, str]]:
    for entry in patterns:
        fragment = str(entry.pattern).replace("^", "").replace("$", "")
        if isinstance(entry, URLResolver):
            if entry.namespace in ("api", "admin"):
                continue  # the API comes from its schema; the admin is staff-only
            inner = f"{namespace}{entry.namespace}:" if entry.namespace else namespace
            yield from _page_routes(entry.url_patterns, prefix + fragment, inner)
        else:
            yield f"{namespace}{entry.name or ''}", "/" + prefix + fragment


def every_route() -> list[tuple[str, str]]:
    """(name, path pattern): the dashboard's pages and every API operation."""
    pages = [
        (name, path)
        for name, path in _page_routes(get_resolver().url_patterns)
        if name not in OPEN_ROUTES
    ]
    operations = [("api", path) for path in api.get_openapi_schema()["paths"]]
    return sorted(set(pages + operations))


ROUTES = every_route()


def test_the_matrix_covers_the_pages_and_the_api() -> None:
    names = {name for name, _ in ROUTES}
    assert {"runs:list", "runs:detail", "runs:case", "runs:decide", "runs:revoke"} <= names
    assert sum(1 for name, _ in ROUTES if name == "api") == len(api.get_openapi_schema()["paths"])


def _client(user: User | None) -> Client:
    client = Client()
    if user is not None:
        client.force_login(user)
    return client


def _requests(client: Client, path: str) -> Iterator[tuple[str, Any]]:
    yield "GET", client.get(path)
    body = {
        "decision": "approve",
        "comment": "x",
        "override": True,
        "reason": "x",
        "case_id": f"{SECRET}-0",
        "rating": "pass",
        "metric": f"{SECRET}_metric",
        "value": "pass",
    }
    if path.startswith("/api/"):
        yield "POST", client.post(path, json.dumps(body), content_type="application/json")
        change = json.dumps({"name": SECRET, "tags": ["x"], "hidden": True})
        yield "PATCH", client.patch(path, change, content_type="application/json")
        yield "DELETE", client.delete(path)
    else:
        yield "POST", client.post(path, body)


def _state() -> tuple[int, ...]:
    return (
        Approval.objects.count(),
        ApprovalRevocation.objects.count(),
        Run.objects.count(),
        Membership.objects.count(),
        CodeRoot.objects.count(),
        CaseAnnotation.objects.count(),
        CaseAnnotationChange.objects.count(),
        Label.objects.count(),
        RunKeeping.objects.count(),
        RunTag.objects.count(),
        # A caller's own API token (made on the tokens page) is theirs to make.
        Change.objects.exclude(action=Change.Action.TOKEN_CREATE).count(),
        ApiToken.objects.filter(user__username="alpha-admin", revoked_at__isnull=True).count(),
        User.objects.filter(is_active=True).count(),
        hash(User.objects.get(username="alpha-admin").password),
    )


def _body(response: Any) -> bytes:
    """The response's bytes, streamed ones (exports) included."""
    if getattr(response, "streaming", False):
        return b"".join(response.streaming_content)
    return bytes(response.content)


def _refusal_problem(caller: str, path: str, response: Any) -> str | None:
    if SECRET.encode() in _body(response):
        return "shows the other project's records"
    if caller != "anonymous":
        return "fails" if response.status_code >= 500 else None
    if path.startswith("/api/") and not path.startswith(("/api/docs", "/api/openapi")):
        return None if response.status_code in (401, 405) else "is not 401"
    if response.status_code == 405:
        return None
    if response.status_code != 302 or not response["Location"].startswith("/accounts/login/"):
        return "does not send to the sign-in page"
    return None


@pytest.mark.parametrize("caller", CALLERS)
def test_no_caller_outside_the_project_reads_or_changes_anything(
    world: dict[str, Any], caller: str
) -> None:
    client = _client(world["callers"][caller])
    before = _state()
    offences = []
    for _, pattern in ROUTES:
        path = _fill(pattern, world)
        for method, response in _requests(client, path):
            problem = _refusal_problem(caller, path, response)
            if problem:
                offences.append(f"{method} {path} ({response.status_code}) {problem}")
    assert not offences, "\n".join(offences)
    assert _state() == before, caller


def test_the_projects_own_admin_reads_each_record_the_matrix_hides(world: dict[str, Any]) -> None:
    """The ids filled in are real: the matrix's refusals are about the caller, not the id."""
    client = _client(world["alpha_admin"])
    for name, pattern in ROUTES:
        path = _fill(pattern, world)
        if "{" not in pattern and "<" not in pattern:
            continue
        if name in (
            "runs:decide",
            "runs:revoke",
            "runs:continue",
            "runs:annotate",
            *SETTINGS_ACTIONS,
        ) or path.endswith(("/approvals", "/revocations", "/continue")):
            continue  # POST-only actions, checked in tests/runs/writers/test_decisions.py,
            # tests/runs/workers/test_sequential_runs.py and tests/runs/writers/test_annotations.py
        response = client.get(path)
        assert response.status_code == 200, (path, response.status_code)
        assert SECRET.encode() in _body(response) or name == "runs:status", path


def test_a_runner_of_another_project_cannot_submit_to_this_one(world: dict[str, Any]) -> None:
    runner = world["callers"]["runner"]
    token = api_token_create(user=runner)[1]
    payload = {
        "config": {"system": "bot.py:answer", "dataset": "d.jsonl", "evaluators": ["Contains"]},
        "base_dir": "/srv/alpha",
        "project": "alpha",
    }
    response = Client().post(
        "/api/runs",
        json.dumps(payload),
        content_type="application/json",
        HTTP_AUTHORIZATION=f"Bearer {token}",
    )
    assert response.status_code == 404
    assert Run.objects.filter(project__slug="beta").count() == 0


def test_a_token_scoped_to_one_project_sees_only_that_project(world: dict[str, Any]) -> None:
    both = member("both", "viewer", project="alpha")
    Membership.objects.create(project=world["beta"], user=both, role="viewer")
    scoped = api_token_create(user=both, project=world["beta"])[1]
    unscoped = api_token_create(user=both)[1]
    first = world["runs"][0]

    def get(token: str, path: str) -> Any:
        return Client().get(path, HTTP_AUTHORIZATION=f"Bearer {token}")

    assert get(unscoped, f"/api/runs/{first.pk}").status_code == 200
    assert get(scoped, f"/api/runs/{first.pk}").status_code == 404
    assert get(scoped, "/api/runs").json()["count"] == 0
    assert get(unscoped, "/api/runs").json()["count"] == 2
