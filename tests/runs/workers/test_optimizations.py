"""Optimizations on the platform: recorded through the Django ledger, queued through the API
and the guided form, and shown on the dashboard's pages."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from django.test import Client

from oloproof_core.optimize import load_optimize_config, run_optimization
from runs.models import Gate, Optimization, OptimizationCandidate, OptimizationReflection, Run
from runs.store import DjangoStore
from runs.workers.optimization_ledger import DjangoLedger
from tests.support.fake_openai import FakeOpenAI
from tests.support.optimize_task import INSTRUCTION, write_project

pytestmark = pytest.mark.django_db(transaction=True)


def recorded_optimization(tmp_path: Path) -> Optimization:
    spec = load_optimize_config(str(write_project(tmp_path / "project")))
    result = run_optimization(spec=spec, store=DjangoStore(), ledger=DjangoLedger())
    return Optimization.objects.get(pk=int(result.optimization_id))


def test_an_optimization_records_candidates_as_releases_gates_the_winner_and_shows_it(
    tmp_path: Path, task_models: FakeOpenAI, teammate: Any
) -> None:
    # One optimization for the records and the pages: each takes a search's worth of
    # system processes to produce.
    record = recorded_optimization(tmp_path)

    assert record.status == "succeeded"
    candidates = list(OptimizationCandidate.objects.filter(optimization=record).order_by("index"))
    assert candidates[0].origin == "seed"
    assert candidates[0].version == f"1+opt{record.pk}.0"
    winner = candidates[record.winner_index]
    assert INSTRUCTION in winner.texts["system_prompt"]
    assert winner.val_run is not None
    assert winner.val_run.release.version == f"1+opt{record.pk}.{winner.index}"
    assert str(winner.val_run.release) == f"calc@1+opt{record.pk}.{winner.index}"
    assert winner.reflection["calls"][0]["reply"]
    assert OptimizationReflection.objects.filter(optimization=record).exists()
    assert record.winner_test_run is not None
    assert record.seed_test_run is not None
    assert record.winner_test_run.split == "test"
    gate = Gate.objects.get(run=record.winner_test_run)
    assert gate.outcome == "pass"  # in the approvals queue like any other gate
    proof = record.outcome["proof"]
    assert proof["winner"]["test"]["estimate"] == 1.0
    assert proof["winner"]["optimism_gap"] == 0.0
    assert Run.objects.filter(split="test").count() == 2
    pages_show_candidates_lineage_diffs_and_the_proof(record, teammate)


def pages_show_candidates_lineage_diffs_and_the_proof(record: Optimization, teammate: Any) -> None:
    client = Client()
    client.force_login(teammate)

    listing = client.get("/optimizations/")
    assert listing.status_code == 200
    assert f"/optimizations/{record.pk}/" in listing.content.decode()
    page = client.get(f"/optimizations/{record.pk}/").content.decode()
    assert "Score per candidate on val" in page
    assert "Frontier: score against cost" in page
    assert "diff against parent" in page
    assert "+You are a calculator. Answer with the number only." in page
    assert "Optimism gap" in page
    assert "decide in the approvals queue" in page


def test_the_api_queues_an_optimization_and_reads_it_back(
    tmp_path: Path, teammate: Any, outsider: Any, token_for: Any
) -> None:
    write_project(tmp_path / "project")
    body = {
        "config": {
            "system": "calc.py:answer",
            "dataset": "cases.jsonl",
            "evaluators": ["exact.py"],
            "budget": {"metric_calls": 60},
        },
        "base_dir": str(tmp_path / "project"),
    }
    register_root(tmp_path / "project")
    client = Client()
    refused = client.post(
        "/api/optimizations",
        body,
        content_type="application/json",
        headers={"Authorization": f"Bearer {token_for(outsider)}"},
    )
    assert refused.status_code == 403
    auth = {"Authorization": f"Bearer {token_for(teammate)}"}
    bad = client.post(
        "/api/optimizations",
        {**body, "config": {**body["config"], "budget": {}}},
        content_type="application/json",
        headers=auth,
    )
    assert bad.status_code == 400
    assert "budget" in bad.json()["detail"]
    made = client.post("/api/optimizations", body, content_type="application/json", headers=auth)
    assert made.status_code == 201, made.content
    assert made.json()["status"] == "queued"
    detail = client.get(f"/api/optimizations/{made.json()['id']}", headers=auth).json()
    assert detail["config"]["budget"] == {"metric_calls": 60}
    assert client.get("/api/optimizations", headers=auth).json()["count"] == 1


def test_the_guided_form_queues_an_optimization_after_checking_it(
    tmp_path: Path, teammate: Any
) -> None:
    write_project(tmp_path / "project")
    register_root(tmp_path / "project")
    client = Client()
    client.force_login(teammate)
    form = {
        "kind": "optimization",
        "base_dir": str(tmp_path / "project"),
        "system": "calc.py:answer",
        "dataset": "cases.jsonl",
        "evaluators": "exact.py",
        "engine": "gepa",
    }
    refused = client.post("/runs/new/", form)
    assert "budget" in refused.content.decode()
    assert not Optimization.objects.exists()
    queued = client.post("/runs/new/", {**form, "budget_metric_calls": "50"})
    record = Optimization.objects.get()
    assert queued.status_code == 302
    assert queued["Location"] == f"/optimizations/{record.pk}/"
    assert record.config["budget"] == {"metric_calls": 50}
    assert record.config["engine"] == "gepa"


def register_root(folder: Path) -> None:
    """The project's admin lets its code come from `folder`, as for runs."""
    from runs.access import LOCAL
    from runs.writers.projects import code_root_register, project_default_ensure

    code_root_register(by=LOCAL, project=project_default_ensure(), path=str(folder))
