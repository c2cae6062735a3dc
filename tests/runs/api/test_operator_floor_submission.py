"""The operator's floor on the platform's faces and its workers' side, in this process.

Where the process that checks or runs a config has `OLOPROOF_SANDBOX=required`, the one
submission check (`runs.workers.run_code.run_config_verify`: the API, the New-run form,
`oloproof.submit`) refuses `sandbox: off` and `isolation: thread` beside their keys, and
a run queued before the floor was set fails on a worker that has it, never running
lowered. A real worker process over Redis: test_operator_floor_worker.py; the command line:
tests/faces/test_operator_floor_command.py.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from django.db import transaction
from django.test import Client

from oloproof import submit
from oloproof_core import ConfigError
from runs.access import LOCAL
from runs.models import CaseResult, Run, RunChunk
from runs.services import run_submit
from runs.workers import chunks as chunk_work
from runs.workers import planning
from runs.writers.projects import code_root_register, project_default_ensure
from tests.support.platform import write_project

pytestmark = pytest.mark.django_db

FLOOR = "this machine's operator set OLOPROOF_SANDBOX=required, which a run cannot lower"
MARKING_BOT = """
from pathlib import Path

from oloproof import system


@system(name="queue-bot", version="1")
def answer(case):
    Path(__file__).with_name("ran.txt").write_text("the system ran")
    return {"label": "refund"}
"""
LOWERING = [({"sandbox": "off"}, "sandbox"), ({"isolation": "thread"}, "isolation")]


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A registered project whose system leaves ran.txt beside it if it ever runs."""
    config = write_project(tmp_path / "project", n_cases=6)
    (config.parent / "bot.py").write_text(MARKING_BOT, encoding="utf-8")
    code_root_register(by=LOCAL, project=project_default_ensure(), path=str(config.parent))
    return config


@pytest.fixture
def floor(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OLOPROOF_SANDBOX", "required")


def queued(config: Path, **overrides: Any) -> Run:
    """Queued as the services queue it; in a `db` test on_commit never sends it on."""
    data = {**yaml.safe_load(config.read_text()), **overrides}
    with transaction.atomic():
        return run_submit(config=data, base_dir=str(config.parent))


@pytest.mark.parametrize(("lowering", "key"), LOWERING)
def test_the_api_answers_400_naming_the_setting_and_queues_nothing(
    floor: None, project: Path, teammate: Any, token_for: Any, lowering: dict[str, str], key: str
) -> None:
    config = {**yaml.safe_load(project.read_text()), **lowering}
    response = Client().post(
        "/api/runs",
        {"config": config, "base_dir": str(project.parent)},
        content_type="application/json",
        HTTP_AUTHORIZATION=f"Bearer {token_for(teammate)}",
    )
    assert response.status_code == 400, response.content
    detail = response.json()["detail"]
    assert f"{key}: {lowering[key]} " in detail
    assert FLOOR in detail
    assert Run.objects.count() == 0


@pytest.mark.parametrize(("lowering", "key"), LOWERING)
def test_the_form_shows_the_floor_beside_the_field_that_lowers_it(
    floor: None, project: Path, teammate: Any, lowering: dict[str, str], key: str
) -> None:
    client = Client()
    client.force_login(teammate)
    fields = {
        "project": "default",
        "kind": "evaluation",
        "base_dir": str(project.parent),
        "system": "bot.py:answer",
        "dataset": "data.jsonl",
        "evaluators": "ExactMatch: {criterion: exact_label, field: label}",
        **lowering,
    }
    page = client.post("/runs/new/", fields)
    assert page.status_code == 200
    form = page.context["form"]
    assert set(form.errors) == {key}
    assert FLOOR in form.errors[key][0]
    content = page.content.decode()
    # Rendered right after its field's select, the choice kept.
    select = content.index(f'name="{key}"')
    assert content.index("OLOPROOF_SANDBOX=required") > select
    assert f'value="{lowering[key]}" selected' in content
    assert Run.objects.count() == 0


def test_the_library_submit_and_so_run_submit_refuse_it_with_the_file_and_line(
    floor: None, project: Path
) -> None:
    project.write_text(project.read_text() + "sandbox: off\n", encoding="utf-8")
    with pytest.raises(ConfigError) as caught:
        submit(project)
    assert f"{project}:7: sandbox: off runs the system without a sandbox" in str(caught.value)
    assert FLOOR in str(caught.value)
    assert Run.objects.count() == 0


def test_without_the_floor_both_are_queued_as_before(project: Path) -> None:
    assert queued(project, sandbox="off").status == Run.Status.QUEUED
    assert queued(project, isolation="thread").status == Run.Status.QUEUED


@pytest.mark.parametrize(("lowering", "key"), LOWERING)
def test_a_run_queued_before_the_floor_fails_on_a_worker_that_has_it(
    project: Path, monkeypatch: pytest.MonkeyPatch, lowering: dict[str, str], key: str
) -> None:
    run = queued(project, **lowering)
    monkeypatch.setenv("OLOPROOF_SANDBOX", "required")

    assert planning.run_start(run_id=run.pk) == "failed"

    run.refresh_from_db()
    assert run.status == Run.Status.FAILED
    assert f"refused run {run.pk}: {key}: {lowering[key]} " in run.error
    assert FLOOR in run.error
    assert not RunChunk.objects.filter(run=run).exists()
    assert not (project.parent / "ran.txt").exists()


def test_a_chunk_planned_before_the_floor_is_not_run_on_a_worker_that_has_it(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    run = queued(project, sandbox="off")
    assert planning.run_start(run_id=run.pk) == "started"
    monkeypatch.setenv("OLOPROOF_SANDBOX", "required")

    chunk = RunChunk.objects.get(run=run)
    assert chunk_work.chunk_execute(chunk_id=chunk.pk) == "failed"

    run.refresh_from_db()
    assert run.status == Run.Status.FAILED
    assert f"refused run {run.pk}: sandbox: off " in run.error
    assert FLOOR in run.error
    assert not CaseResult.objects.filter(run=run).exists()
    assert not (project.parent / "ran.txt").exists()
