"""The REST API: every route behind a token or a session, the permission matrix, 4xx errors."""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.staticfiles import finders
from django.test import Client

from evalsite.api import api
from runs.access import LOCAL
from runs.models import ApiToken, Approval, Run
from runs.writers.projects import code_root_register, project_default_ensure
from runs.writers.recording import gate_record
from runs.writers.tokens import api_token_revoke
from tests.runs.conftest import record_evaluation
from tests.support.platform import write_project

pytestmark = pytest.mark.django_db


def bearer(token: str) -> dict[str, str]:
    return {"HTTP_AUTHORIZATION": f"Bearer {token}"}


def every_route() -> list[tuple[str, str]]:
    """(method, path) of every operation in the OpenAPI schema, ids filled in."""
    routes = []
    for path, operations in api.get_openapi_schema()["paths"].items():
        concrete = path.replace("{run_id}", "1").replace("{optimization_id}", "1")
        if concrete.endswith(("/compare", "/compare/cases", "/compare/export")):
            concrete += "?baseline=1&candidate=1"
        if concrete.endswith("/compare/runs"):
            concrete += "?runs=1&runs=2"
        if concrete.endswith("/verdicts"):
            concrete += "?criterion=exact_label"
        for method in operations:
            routes.append((method.upper(), concrete))
    return routes


def call(client: Client, method: str, path: str, **extra: Any) -> Any:
    if method == "GET":
        return client.get(path, **extra)
    return client.generic(method, path, data="{}", content_type="application/json", **extra)


def test_the_schema_lists_every_route_we_guard() -> None:
    routes = every_route()
    assert ("GET", "/api/runs") in routes
    assert ("POST", "/api/runs/1/approvals") in routes
    assert ("POST", "/api/optimizations") in routes
    assert ("GET", "/api/optimizations/1") in routes
    assert ("GET", "/api/optimizations/1/winner") in routes
    assert ("POST", "/api/runs/1/continue") in routes
    assert ("GET", "/api/compare/cases?baseline=1&candidate=1") in routes
    assert ("POST", "/api/runs/1/annotations") in routes
    assert ("GET", "/api/runs/1/export") in routes
    assert ("POST", "/api/runs/1/labels") in routes
    assert ("GET", "/api/runs/1/labels") in routes
    assert ("GET", "/api/runs/1/metrics/{metric}/calibration") in routes
    assert ("GET", "/api/runs/1/review/{metric}/next") in routes
    assert ("PATCH", "/api/runs/1") in routes
    assert ("DELETE", "/api/runs/1") in routes
    assert ("GET", "/api/compare/runs?runs=1&runs=2") in routes
    assert ("GET", "/api/runs/1/transcript") in routes
    assert len(routes) == 30


@pytest.mark.parametrize("kind", ["anonymous", "bad token", "revoked token", "inactive user"])
def test_every_route_refuses_callers_without_valid_credentials(
    kind, outsider, token_for, settings
) -> None:
    # More routes than wrong tokens allowed per address: this test is about each route
    # refusing, not about the limit (tests/runs/views/test_sign_in.py checks that).
    settings.OLOPROOF_TOKEN_FAILURES = 1000
    record_evaluation(3)
    headers: dict[str, str] = {}
    if kind == "bad token":
        headers = bearer("olo_not-a-token")
    elif kind == "revoked token":
        token = token_for(outsider)
        api_token_revoke(token=ApiToken.objects.get(user=outsider))
        headers = bearer(token)
    elif kind == "inactive user":
        headers = bearer(token_for(outsider))
        outsider.is_active = False
        outsider.save()
    client = Client()
    for method, path in every_route():
        response = call(client, method, path, **headers)
        assert response.status_code == 401, (kind, method, path, response.content)


def test_docs_and_schema_need_a_login_and_work_offline(outsider) -> None:
    client = Client()
    assert client.get("/api/docs").status_code == 302
    assert client.get("/api/openapi.json").status_code == 302
    client.force_login(outsider)
    page = client.get("/api/docs")
    assert page.status_code == 200
    html = page.content.decode()
    assert "swagger-ui-bundle.js" in html
    assert "cdn." not in html
    assert finders.find("ninja/swagger-ui-bundle.js") is not None
    assert client.get("/api/openapi.json").json()["info"]["title"] == "oloproof API"


def test_runs_list_filters_and_pages(viewer, token_for) -> None:
    first = record_evaluation(6, version="1")
    second = record_evaluation(6, version="2", broken_every=3)
    gate_record(run=Run.objects.get(pk=int(second.run_id)), gate={"outcome": "fail"})
    headers = bearer(token_for(viewer))
    client = Client()

    everything = client.get("/api/runs", **headers).json()
    assert everything["count"] == 2
    assert [item["id"] for item in everything["items"]] == [int(second.run_id), int(first.run_id)]
    assert set(everything["items"][0]) == {
        "id", "project", "status", "system", "version", "dataset_digest", "dataset_source", "split",
        "cases_total", "cases_done", "cases_failed", "gate_outcome", "error", "created_by",
        "created_at", "started_at", "finished_at", "duration_s", "name", "tags", "hidden",
    }  # fmt: skip

    def ids(query: str) -> list[int]:
        return [item["id"] for item in client.get(f"/api/runs?{query}", **headers).json()["items"]]

    assert ids("release=1") == [int(first.run_id)]
    assert ids("system=support-bot&gate=fail") == [int(second.run_id)]
    assert ids("gate=none") == [int(first.run_id)]
    assert ids("system=other") == []
    assert ids(f"dataset={first.provenance['dataset']['digest'][:12]}") == [
        int(second.run_id),
        int(first.run_id),
    ]
    assert ids("status=queued") == []
    page = client.get("/api/runs?created_after=2000-01-01T00:00:00Z&limit=1", **headers).json()
    assert [item["id"] for item in page["items"]] == [int(second.run_id)]
    assert page["previous"] is None
    after = page["next"]
    assert ids(f"created_after=2000-01-01T00:00:00Z&limit=1&after={after}") == [int(first.run_id)]
    assert client.get("/api/runs?limit=1&offset=1", **headers).status_code == 400
    assert client.get("/api/runs?limit=0", **headers).status_code == 400
    assert client.get("/api/runs?status=finished", **headers).status_code == 422


def test_run_detail_metrics_cases_and_verdicts(viewer, token_for) -> None:
    result = record_evaluation(9, broken_every=4)
    run_id = int(result.run_id)
    headers = bearer(token_for(viewer))
    client = Client()

    detail = client.get(f"/api/runs/{run_id}", **headers).json()
    assert detail["system"] == "support-bot"
    assert detail["cases_failed"] == 3
    assert detail["provenance"]["dataset"]["digest"] == result.provenance["dataset"]["digest"]

    metrics = client.get(f"/api/runs/{run_id}/metrics", **headers).json()
    exact = next(m for m in metrics if m["metric"] == "exact_label")
    assert (exact["n_observed"], exact["n_missing"]) == (6, 3)
    assert exact["lower"] == result.metric("exact_label").interval.lower

    page = client.get(f"/api/runs/{run_id}/cases?limit=4&offset=0", **headers).json()
    assert page["count"] == 9
    assert [c["case_id"] for c in page["items"]] == [
        "case_00000",
        "case_00001",
        "case_00002",
        "case_00003",
    ]
    first = page["items"][0]
    assert first["input"] == {"question": "refund #0"}
    assert first["expected"] == {"label": "refund"}
    assert first["error"]["type"] == "RuntimeError"
    assert first["outcome"] == "missing"
    assert page["items"][1]["output"] == {"label": "other"}
    assert {v["criterion"] for v in page["items"][1]["verdicts"]} == {"exact_label", "short_answer"}

    missing = client.get(f"/api/runs/{run_id}/cases?outcome=error", **headers).json()
    assert [c["case_id"] for c in missing["items"]] == ["case_00000", "case_00004", "case_00008"]
    # The case table's own filters: a search over the inputs, a criterion's outcome.
    found = client.get(f"/api/runs/{run_id}/cases?q=refund+4", **headers).json()
    assert [c["case_id"] for c in found["items"]] == ["case_00004"]
    in_outputs = client.get(f"/api/runs/{run_id}/cases?q=refund&search_in=output", **headers)
    assert [c["case_id"] for c in in_outputs.json()["items"]] == ["case_00002", "case_00006"]
    passed = client.get(f"/api/runs/{run_id}/cases?criterion=exact_label&outcome=passed", **headers)
    assert passed.json()["count"] == 6
    assert client.get(f"/api/runs/{run_id}/cases?search_in=title", **headers).status_code == 422

    verdicts = client.get(f"/api/runs/{run_id}/verdicts?criterion=exact_label", **headers).json()
    assert verdicts["count"] == 9
    assert client.get("/api/evaluators?criterion=short_answer", **headers).json()[0]["reads"] == [
        "output"
    ]
    assert client.get("/api/runs/99999", **headers).status_code == 404
    assert client.get("/api/runs/99999/metrics", **headers).status_code == 404


def test_compare_two_runs_on_the_same_cases(viewer, token_for) -> None:
    baseline = record_evaluation(20, version="1")
    candidate = record_evaluation(20, version="2", wrong_every=5)
    client = Client()
    response = client.get(
        f"/api/compare?baseline={baseline.run_id}&candidate={candidate.run_id}",
        **bearer(token_for(viewer)),
    )
    assert response.status_code == 200, response.content
    body = response.json()
    exact = next(m for m in body["metrics"] if m["metric"] == "exact_label")
    assert exact["n_pairs"] == 20
    assert exact["difference"] == pytest.approx(-0.2)
    assert exact["regressed"] == ["case_00001", "case_00006", "case_00011", "case_00016"]


def test_submitting_needs_the_runner_role_and_a_code_root_and_queues_after_commit(
    outsider, viewer, teammate, token_for, django_capture_on_commit_callbacks, tmp_path
) -> None:
    write_project(tmp_path / "evals" / "support_bot", n_cases=3)
    code_root_register(by=LOCAL, project=project_default_ensure(), path=str(tmp_path / "evals"))
    client = Client()
    payload = {
        "config": {
            "system": "bot.py:answer",
            "dataset": "data.jsonl",
            "evaluators": [{"ExactMatch": {"criterion": "exact_label", "field": "label"}}],
        },
        "base_dir": str(tmp_path / "evals" / "support_bot"),
    }
    for user in (outsider, viewer):
        refused = client.post(
            "/api/runs", payload, content_type="application/json", **bearer(token_for(user))
        )
        assert refused.status_code == 403, refused.content
    outside = client.post(
        "/api/runs",
        {**payload, "base_dir": str(tmp_path / "elsewhere")},
        content_type="application/json",
        **bearer(token_for(teammate)),
    )
    assert outside.status_code == 403
    assert "outside the project's registered code roots" in outside.json()["detail"]
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        response = client.post(
            "/api/runs", payload, content_type="application/json", **bearer(token_for(teammate))
        )
    assert response.status_code == 201, response.content
    run = Run.objects.get(pk=response.json()["id"])
    assert run.status == "queued"
    assert run.created_by == teammate
    assert run.config["base_dir"] == str(tmp_path / "evals" / "support_bot")
    assert len(callbacks) == 1

    bad = client.post(
        "/api/runs",
        {"config": {"system": "x:y", "dataset": "d.jsonl", "evaluatorz": []}, "base_dir": "/x"},
        content_type="application/json",
        **bearer(token_for(teammate)),
    )
    assert bad.status_code == 400
    assert "evaluatorz" in bad.json()["detail"]


def test_approval_permission_matrix(approver, teammate, outsider, token_for) -> None:
    run = Run.objects.get(pk=int(record_evaluation(5).run_id))
    gate_record(run=run, gate={"outcome": "inconclusive", "summary": "needs more cases"})
    client = Client()
    url = f"/api/runs/{run.pk}/approvals"

    def post(user: Any, body: dict[str, Any]) -> Any:
        return client.post(url, body, content_type="application/json", **bearer(token_for(user)))

    response = post(teammate, {"decision": "approve", "override": True, "comment": "because"})
    assert response.status_code == 403, response.content
    assert "approver role" in response.json()["detail"]
    hidden = post(outsider, {"decision": "approve", "override": True, "comment": "because"})
    assert hidden.status_code == 404, hidden.content
    without_override = post(approver, {"decision": "approve", "comment": "fine"})
    assert without_override.status_code == 400
    assert "override" in without_override.json()["detail"]
    accepted = post(approver, {"decision": "approve", "override": True, "comment": "flaky rule"})
    assert accepted.status_code == 201
    assert accepted.json()["user"] == "alice"
    assert accepted.json()["gate_outcome"] == "inconclusive"
    assert post(approver, {"decision": "maybe"}).status_code == 422

    gate = client.get(f"/api/runs/{run.pk}/gate", **bearer(token_for(teammate))).json()
    assert gate["outcome"] == "inconclusive"
    assert [(a["user"], a["decision"], a["override"]) for a in gate["approvals"]] == [
        ("alice", "approve", True)
    ]
    assert Approval.objects.count() == 1


def test_session_login_is_accepted_for_the_dashboard(approver) -> None:
    record_evaluation(3)
    client = Client()
    client.force_login(approver)
    assert client.get("/api/runs").json()["count"] == 1


def test_token_use_is_recorded(viewer, token_for) -> None:
    token = token_for(viewer)
    assert Client().get("/api/runs", **bearer(token)).status_code == 200
    assert ApiToken.objects.get(user=viewer).last_used_at is not None
    assert ApiToken.objects.get(user=viewer).digest != token
