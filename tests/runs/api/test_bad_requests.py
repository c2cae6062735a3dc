"""Requests that used to answer 500 now answer a clear 4xx, on SQLite and PostgreSQL alike."""

from __future__ import annotations

import json

import pytest
from django.test import Client

from runs.models import Run
from runs.writers.tokens import api_token_create
from tests.runs.conftest import record_evaluation

pytestmark = pytest.mark.django_db


@pytest.fixture
def api(teammate) -> Client:
    return Client(HTTP_AUTHORIZATION=f"Bearer {api_token_create(user=teammate)[1]}")


@pytest.fixture
def page(viewer) -> Client:
    client = Client(raise_request_exception=False)
    client.force_login(viewer)
    return client


def test_dashboard_queries_that_used_to_fail(page) -> None:
    record_evaluation(3)
    assert page.get("/runs/status.json?ids=²,1").status_code == 200
    assert page.get("/runs/status.json?ids=99999999999999999999999").status_code == 200
    assert page.get("/?created_before=9999-12-31").status_code == 200
    assert page.get("/?created_after=0001-01-01").status_code == 200
    assert page.get("/?system=%00").status_code == 400
    assert page.get("/runs/1/cases/?q=a%00b").status_code == 400


def test_api_inputs_that_used_to_fail(api) -> None:
    assert api.get("/api/runs?offset=9223372036854775808").status_code == 400
    assert api.get("/api/runs?system=%00").status_code == 400
    for raw in (
        '{"config": {"system": "a:b", "dataset": "d.jsonl", "evaluators": ["x:y"], '
        '"timeout": NaN}, "base_dir": "/srv"}',
        '{"config": {"system": "a:b", "dataset": "d.jsonl", "evaluators": ["x:y"], '
        '"confidence": Infinity}, "base_dir": "/srv"}',
        '{"config": {"system": "a\\u0000b", "dataset": "d.jsonl", "evaluators": ["x:y"]}, '
        '"base_dir": "/srv"}',
        '{"config": {"system": "a:b", "dataset": "\\ud800.jsonl", "evaluators": ["x:y"]}, '
        '"base_dir": "/srv"}',
    ):
        response = api.post("/api/runs", raw, content_type="application/json")
        assert response.status_code == 400, (raw, response.content)
    assert Run.objects.count() == 0


def test_a_nan_inside_a_config_value_is_named(api) -> None:
    config = {"system": "a:b", "dataset": "d.jsonl", "evaluators": [{"X": {"k": float("nan")}}]}
    raw = json.dumps({"config": config, "base_dir": "/srv"})
    response = api.post("/api/runs", raw, content_type="application/json")
    assert response.status_code == 400
    assert "evaluators[0].X.k is nan" in response.json()["detail"]
