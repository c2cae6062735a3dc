"""Registered code roots: the API, the form and the workers accept only code from inside them."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from django.test import Client

from runs.access import LOCAL
from runs.errors import NotFoundError, NotPermittedError
from runs.models import Run
from runs.services import run_submit, run_submit_by
from runs.workers import planning
from runs.writers.projects import code_root_register, code_root_unregister, project_ensure
from runs.writers.tokens import api_token_create
from tests.runs.conftest import member
from tests.support.platform import write_project

pytestmark = pytest.mark.django_db


def config_of(path: Path) -> dict[str, Any]:
    return dict(yaml.safe_load(path.read_text()))


def test_only_a_project_admin_registers_a_code_root(tmp_path: Path) -> None:
    project = project_ensure(slug="team")
    runner = member("runner", "runner", project="team")
    admin = member("admin", "admin", project="team")
    with pytest.raises(NotPermittedError, match="admin role"):
        code_root_register(by=runner, project=project, path=str(tmp_path))
    with pytest.raises(NotFoundError):
        code_root_register(by=member("stranger", None), project=project, path=str(tmp_path))
    root = code_root_register(by=admin, project=project, path=str(tmp_path))
    assert root.path == str(tmp_path.resolve())


def test_a_run_from_outside_the_roots_or_through_a_link_out_is_refused(tmp_path: Path) -> None:
    project = project_ensure(slug="team")
    runner = member("runner", "runner", project="team")
    allowed = write_project(tmp_path / "root" / "bot", n_cases=3)
    elsewhere = write_project(tmp_path / "elsewhere", n_cases=3)
    code_root_register(by=LOCAL, project=project, path=str(tmp_path / "root"))
    run = run_submit_by(
        user=runner, config=config_of(allowed), base_dir=str(allowed.parent), project="team"
    )
    assert run.project == project
    with pytest.raises(NotPermittedError, match="outside the project's registered code roots"):
        run_submit_by(
            user=runner, config=config_of(elsewhere), base_dir=str(elsewhere.parent), project="team"
        )
    (tmp_path / "root" / "link").symlink_to(elsewhere.parent)
    with pytest.raises(NotPermittedError, match="outside"):
        run_submit_by(
            user=runner,
            config=config_of(elsewhere),
            base_dir=str(tmp_path / "root" / "link"),
            project="team",
        )
    metric_outside = {**config_of(allowed), "evaluators": ["../../elsewhere/checks.py"]}
    with pytest.raises(NotPermittedError, match=r"evaluators\[0\]"):
        run_submit_by(
            user=runner, config=metric_outside, base_dir=str(allowed.parent), project="team"
        )


def test_the_api_refuses_an_absolute_base_dir_outside_the_roots(tmp_path: Path) -> None:
    project = project_ensure(slug="team")
    code_root_register(by=LOCAL, project=project, path=str(tmp_path / "root"))
    token = api_token_create(user=member("runner", "runner", project="team"))[1]
    response = Client().post(
        "/api/runs",
        json.dumps(
            {
                "config": {"system": "bot:answer", "dataset": "d.jsonl", "evaluators": ["x:y"]},
                "base_dir": "/",
                "project": "team",
            }
        ),
        content_type="application/json",
        HTTP_AUTHORIZATION=f"Bearer {token}",
    )
    assert response.status_code == 403
    assert Run.objects.count() == 0


def test_the_worker_checks_the_roots_again_when_it_loads_the_code(tmp_path: Path) -> None:
    config = write_project(tmp_path / "project", n_cases=3)
    run = run_submit(config=config_of(config), base_dir=str(config.parent))
    code_root_unregister(by=LOCAL, project=run.project, path=str(config.parent))
    assert planning.run_start(run_id=run.pk) == "failed"
    run.refresh_from_db()
    assert run.status == "failed"
    assert "outside the project's registered code roots" in run.error
