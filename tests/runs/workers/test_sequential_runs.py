"""Sequential gates on the workers, in one process: a first batch, "run more cases" into
the same run until the gate decides, the same decision as the engine's own sequential
runner, and the refusals (decided gates, standing decisions, other roles).

Celery runs tasks eagerly here, so the workers' code paths run against the test
database; tests/runs/workers/test_execution_progress.py runs them on real worker processes.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from django.db import transaction
from django.test import Client
from django.utils import timezone

import oloproof_core as engine
from evalsite.celery import app
from oloproof_core.results.compare import ValueColumns
from runs.access import LOCAL
from runs.errors import ConflictError, InvalidRequestError, NotFoundError
from runs.models import Approval, CaseResult, Run, RunChunk
from runs.selectors.results import run_result
from runs.services import approval_create, approval_revoke, run_continue, run_submit
from runs.writers.recording import run_conclusion_record
from tests.runs.conftest import member
from tests.support.platform import write_project

N_CASES = 60
BATCH = 10
POLICY = {
    "version": 1,
    "sequential": {"batch": BATCH},
    "rules": [{"metric": "short_label", "min": 0.7}],
}


@pytest.fixture
def eager_tasks() -> Iterator[None]:
    saved = (app.conf.task_always_eager, app.conf.task_eager_propagates)
    app.conf.task_always_eager = True
    app.conf.task_eager_propagates = True
    yield
    app.conf.task_always_eager, app.conf.task_eager_propagates = saved


@pytest.fixture
def project(tmp_path: Path, settings: Any) -> Path:
    settings.OLOPROOF_CHUNK_SIZE = 6
    config = write_project(tmp_path / "project", n_cases=N_CASES)
    (config.parent / "release.yaml").write_text(yaml.safe_dump(POLICY), encoding="utf-8")
    return config


def submit(config_path: Path, **overrides: Any) -> Run:
    # Threads rather than processes for the system: these tests are about the gate.
    config = {
        **yaml.safe_load(config_path.read_text()),
        "policy": "release.yaml",
        "isolation": "thread",
        **overrides,
    }
    with transaction.atomic():
        run = run_submit(config=config, base_dir=str(config_path.parent))
    return Run.objects.get(pk=run.pk)


def kept_columns(run: Run) -> ValueColumns:
    from metrics.selectors import runs_value_columns

    return runs_value_columns(run_ids=[run.pk])[run.pk]


def engine_until_decided(config_path: Path, repeats: int = 1) -> engine.Result:
    """The same run through the engine's own sequential runner, in this process."""
    config = engine.run_config_from_mapping(
        {**yaml.safe_load(config_path.read_text()), "isolation": "thread"},
        base_dir=str(config_path.parent),
        label=str(config_path),
    )
    return engine.run_until_decided(
        system=config.system,
        dataset=config.dataset,
        evaluators=config.evaluators,
        store=engine.InMemoryStore(),
        policy=str(config_path.parent / "release.yaml"),
        record=False,
        isolation="thread",
        repeats=repeats,
    )


@pytest.mark.django_db(transaction=True)
def test_a_sequential_run_stops_after_its_first_batch_and_continues_to_the_engines_decision(
    project: Path, eager_tasks: None
) -> None:
    run = submit(project)
    assert run.status == Run.Status.SUCCEEDED, run.error
    assert run.gate.outcome == "inconclusive"
    assert (run.cases_done, run.cases_total) == (BATCH, BATCH)
    assert run.provenance["sequential"] == {
        "horizon": N_CASES, "looks": 1, "n_run": BATCH, "order": "sha256(case id)", "batch": BATCH,
    }  # fmt: skip
    first_ids = set(CaseResult.objects.filter(run=run).values_list("case_id", flat=True))
    # The finaliser keeps the concluded run's value columns for comparisons...
    assert set(kept_columns(run).ids) == first_ids

    continued = run_continue(user=LOCAL, run_id=run.pk)
    assert continued.pk == run.pk

    run.refresh_from_db()
    expected = engine_until_decided(project)
    assert run.status == Run.Status.SUCCEEDED, run.error
    assert run.gate.outcome == expected.gate.outcome == "pass"
    assert run.provenance["sequential"]["looks"] == expected.provenance["sequential"]["looks"]
    assert run.provenance["sequential"]["n_run"] == expected.provenance["sequential"]["n_run"]
    assert run.cases_done == run.cases_total == len(expected.cases) < N_CASES
    ids = list(
        CaseResult.objects.filter(run=run).order_by("position").values_list("case_id", flat=True)
    )
    # The same cases in the same (content-fixed) order, the first batch kept as it was.
    assert ids == [case.id for case in expected.cases]
    assert first_ids <= set(ids)
    # ...and writes them anew when the continued run concludes again.
    assert kept_columns(run).ids == ids
    assert kept_columns(run).values["exact_label"].size == len(ids)
    positions = list(CaseResult.objects.filter(run=run).values_list("position", flat=True))
    assert sorted(positions) == list(range(len(ids)))
    assert [rule["outcome"] for rule in run.gate.rules] == [
        rule.outcome for rule in expected.gate.rules
    ]
    assert RunChunk.objects.filter(run=run).exclude(status=RunChunk.Status.DONE).count() == 0


@pytest.mark.django_db(transaction=True)
def test_a_sequential_run_with_repeats_adds_whole_cases_to_the_engines_decision(
    project: Path, eager_tasks: None
) -> None:
    # Each case runs three times; a batch is ten cases, thirty rows, cut into chunks of six.
    run = submit(project, repeats=3)
    assert run.status == Run.Status.SUCCEEDED, run.error
    assert (run.cases_done, run.cases_total) == (3 * BATCH, 3 * BATCH)
    state = run.provenance["sequential"]
    assert (state["horizon"], state["n_run"], state["batch"], state["repeats"]) == (
        N_CASES, BATCH, BATCH, 3,
    )  # fmt: skip
    assert run.gate.outcome == "inconclusive"
    run_continue(user=LOCAL, run_id=run.pk)
    run.refresh_from_db()
    expected = engine_until_decided(project, repeats=3)
    assert run.status == Run.Status.SUCCEEDED, run.error
    assert run.gate.outcome == expected.gate.outcome == "pass"
    assert BATCH < run.provenance["sequential"]["n_run"] < N_CASES
    assert run.provenance["sequential"]["n_run"] == expected.provenance["sequential"]["n_run"]
    ids = list(
        CaseResult.objects.filter(run=run).order_by("position").values_list("case_id", flat=True)
    )
    # The engine's rows in its order: every case's three repeats together, none cut.
    assert ids == [case.id for case in expected.cases]
    assert len(ids) == 3 * run.provenance["sequential"]["n_run"]
    assert all(
        ids[i].rpartition("#r")[0] == ids[i + 2].rpartition("#r")[0] for i in range(0, len(ids), 3)
    )


@pytest.mark.django_db(transaction=True)
def test_more_cases_are_refused_for_a_decided_gate_and_a_fixed_size_one(
    project: Path, eager_tasks: None
) -> None:
    decided = submit(project)
    run_continue(user=LOCAL, run_id=decided.pk)
    with pytest.raises(InvalidRequestError, match="is decided \\(pass\\)"):
        run_continue(user=LOCAL, run_id=decided.pk)

    (project.parent / "fixed.yaml").write_text(
        yaml.safe_dump({"version": 1, "rules": [{"metric": "exact_label", "min": 0.8}]})
    )
    whole = submit(project, policy="fixed.yaml")
    assert whole.gate.outcome == "inconclusive"
    assert whole.cases_done == N_CASES
    with pytest.raises(InvalidRequestError, match="not run sequentially"):
        run_continue(user=LOCAL, run_id=whole.pk)


@pytest.mark.django_db(transaction=True)
def test_a_standing_decision_is_not_carried_over_to_more_cases(
    project: Path, eager_tasks: None
) -> None:
    run = submit(project)
    approver = member("alice", "approver")
    approval_create(
        run=run, user=approver, decision="approve", comment="good enough", override=True
    )

    with pytest.raises(ConflictError, match="standing decision"):
        run_continue(user=LOCAL, run_id=run.pk)
    run.refresh_from_db()
    assert (run.status, run.cases_done) == (Run.Status.SUCCEEDED, BATCH)

    approval_revoke(run=run, user=approver, reason="let the gate see more cases")
    run_continue(user=LOCAL, run_id=run.pk)
    run.refresh_from_db()
    assert run.gate.outcome == "pass"
    # The revoked approval stays in the audit trail with the outcome it was made on.
    assert list(Approval.objects.filter(gate=run.gate).values_list("gate_outcome", flat=True)) == [
        "inconclusive"
    ]


@pytest.mark.django_db(transaction=True)
def test_run_more_cases_needs_the_runner_role_and_a_visible_run(
    project: Path, eager_tasks: None
) -> None:
    run = submit(project)
    viewer = member("victor", "viewer")
    outsider = member("mallory", None)
    with pytest.raises(NotFoundError):
        run_continue(user=outsider, run_id=run.pk)
    client = Client()
    client.force_login(viewer)
    assert client.post(f"/api/runs/{run.pk}/continue").status_code == 403
    page = client.get(f"/runs/{run.pk}/")
    assert b"Run more cases" not in page.content

    runner = member("bob", "runner")
    client.force_login(runner)
    page = client.get(f"/runs/{run.pk}/")
    assert b"Run more cases" in page.content
    assert f"decided on {BATCH} of the dataset's {N_CASES} cases".encode() in page.content
    response = client.post(f"/runs/{run.pk}/continue")
    assert response.status_code == 302
    run.refresh_from_db()
    assert run.gate.outcome == "pass"
    page = client.get(f"/runs/{run.pk}/")
    assert b"Run more cases" not in page.content
    response = client.post(f"/api/runs/{run.pk}/continue")
    assert response.status_code == 400
    assert "is decided (pass)" in response.json()["detail"]


@pytest.mark.django_db(transaction=True)
def test_a_gate_is_not_decided_while_its_run_runs_more_cases(
    project: Path, eager_tasks: None
) -> None:
    run = submit(project)
    approver = member("alice", "approver")
    client = Client()
    client.force_login(approver)
    # Inside one transaction the workers are not yet sent the new batch (they are sent
    # when it commits), so the run is seen as it is while they work.
    with transaction.atomic():
        run_continue(user=LOCAL, run_id=run.pk)
        with pytest.raises(ConflictError, match="running more cases"):
            approval_create(run=run, user=approver, decision="reject", comment="no")
        page = client.get(f"/runs/{run.pk}/").content.decode()
        assert "running more cases; the decision shown is the one over the 10 cases" in page
        assert f">{BATCH}/{2 * BATCH}</span> cases done" in page
        assert "Run more cases</button>" not in page
    run.refresh_from_db()
    assert run.gate.outcome == "pass"
    assert not Approval.objects.filter(gate=run.gate).exists()


@pytest.mark.django_db(transaction=True)
def test_a_late_finaliser_of_the_first_batch_does_not_end_the_continued_run(
    project: Path, eager_tasks: None
) -> None:
    run = submit(project)
    # As a second finaliser of the first batch saw the run: read before it concluded.
    late = Run.objects.get(pk=run.pk)
    late_result = run_result(run=late)
    with transaction.atomic():
        run_continue(user=LOCAL, run_id=run.pk)
        assert not run_conclusion_record(run=late, result=late_result, finished_at=timezone.now())
        run.refresh_from_db()
        assert (run.status, run.cases_total) == (Run.Status.RUNNING, 2 * BATCH)
    run.refresh_from_db()
    assert run.status == Run.Status.SUCCEEDED, run.error
    assert run.gate.outcome == "pass"
    assert run.cases_done == run.cases_total > 2 * BATCH
