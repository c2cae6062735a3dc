"""Before a run is queued its config is loaded as a worker will load it, on every face.

The New-run form, `oloproof.submit` (so `oloproof run --submit`) and the API share
`runs.workers.run_code.run_config_verify`: a misspelt system, a missing dataset, a bad row,
a policy rule that could never pass are all reported at once, and nothing is queued
or recorded.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from django.test import Client

from oloproof import submit
from oloproof_core import ConfigError
from runs.access import LOCAL
from runs.errors import RunConfigInvalidError
from runs.models import Dataset, Run
from runs.services import run_submit
from runs.writers.projects import code_root_register, project_default_ensure
from tests.support.platform import write_project

pytestmark = pytest.mark.django_db

NEVER_PASSING = "version: 1\nrules:\n  - metric: exact_label\n    min: 1.0\n"


def broken_config(folder: Path) -> Path:
    """A project whose config names a misspelt system, a missing dataset and a bad policy."""
    config = write_project(folder, n_cases=3)
    (folder / "release.yaml").write_text(NEVER_PASSING, encoding="utf-8")
    text = config.read_text(encoding="utf-8")
    text = text.replace("bot.py:answer", "bot.py:answr").replace("data.jsonl", "dta.jsonl")
    config.write_text(text + "policy: release.yaml\n", encoding="utf-8")
    return config


def keys_of(problems: list[tuple[str | None, str]]) -> list[str | None]:
    return [key for key, _ in problems]


def test_every_problem_is_reported_and_nothing_is_recorded(tmp_path: Path) -> None:
    config = broken_config(tmp_path)
    with pytest.raises(RunConfigInvalidError) as caught:
        run_submit(config=dict(yaml.safe_load(config.read_text())), base_dir=str(tmp_path))
    problems = caught.value.problems
    assert keys_of(problems) == ["system", "dataset", "policy"]
    system, dataset, policy = (message for _, message in problems)
    assert "has no attribute 'answr' (did you mean 'answer'?)" in system
    assert "dataset 'dta.jsonl' not found" in dataset
    assert "did you mean 'data.jsonl'?" in dataset
    assert "release.yaml:3: rules[0].min: 1 can never pass" in policy
    assert Run.objects.count() == 0
    assert Dataset.objects.count() == 0


def test_the_library_and_the_command_line_name_the_file_and_the_line(tmp_path: Path) -> None:
    config = broken_config(tmp_path)
    with pytest.raises(ConfigError) as caught:
        submit(config)
    message = str(caught.value)
    assert f"{config}:1: system 'bot.py:answr'" in message
    assert f"{config}:2: dataset 'dta.jsonl' not found" in message
    assert f"{config}:7: {tmp_path / 'release.yaml'}:3: rules[0].min" in message
    assert Run.objects.count() == 0


def test_a_bad_row_of_the_dataset_is_named_by_its_line(tmp_path: Path) -> None:
    config = write_project(tmp_path, n_cases=3)
    with (tmp_path / "data.jsonl").open("a", encoding="utf-8") as handle:
        handle.write('{"id": "case_00000", "input": {"question": "again"}}\n')
    with pytest.raises(ConfigError, match=r"data\.jsonl:4: duplicate id 'case_00000'"):
        submit(config)
    assert Run.objects.count() == 0


def test_a_good_config_is_queued_with_its_dataset(tmp_path: Path) -> None:
    config = write_project(tmp_path, n_cases=5)
    submission = submit(config)
    run = Run.objects.get(pk=submission.run_id)
    assert submission.n_cases == 5
    assert run.status == "queued"
    assert run.dataset is not None
    assert run.dataset.n_cases == 5


def form_fields(folder: Path, **changes: str) -> dict[str, Any]:
    fields = {
        "project": "default",
        "kind": "evaluation",
        "base_dir": str(folder),
        "system": "bot.py:answer",
        "dataset": "data.jsonl",
        "evaluators": "ExactMatch: {criterion: exact_label, field: label}",
        "policy": "",
    }
    return {**fields, **changes}


def test_the_form_shows_each_problem_beside_its_field_and_keeps_what_was_typed(
    teammate: Any, tmp_path: Path
) -> None:
    broken_config(tmp_path)
    code_root_register(by=LOCAL, project=project_default_ensure(), path=str(tmp_path))
    client = Client()
    client.force_login(teammate)
    typed = {"system": "bot.py:answr", "dataset": "dta.jsonl", "policy": "release.yaml"}
    page = client.post("/runs/new/", form_fields(tmp_path, **typed))
    assert page.status_code == 200
    form = page.context["form"]
    assert set(form.errors) == {"system", "dataset", "policy"}
    assert "did you mean 'answer'?" in form.errors["system"][0]
    content = page.content.decode()
    assert 'value="bot.py:answr"' in content
    assert 'value="dta.jsonl"' in content
    assert Run.objects.count() == 0
    assert not list(page.context["messages"])


def test_the_api_refuses_a_misspelt_system_with_a_400(
    teammate: Any, token_for: Any, tmp_path: Path
) -> None:
    write_project(tmp_path, n_cases=3)
    code_root_register(by=LOCAL, project=project_default_ensure(), path=str(tmp_path))
    response = Client().post(
        "/api/runs",
        {
            "config": {
                "system": "bot:answr",
                "dataset": "data.jsonl",
                "evaluators": [{"ExactMatch": {"criterion": "exact_label", "field": "label"}}],
            },
            "base_dir": str(tmp_path),
        },
        content_type="application/json",
        HTTP_AUTHORIZATION=f"Bearer {token_for(teammate)}",
    )
    assert response.status_code == 400
    assert "bot has no attribute 'answr'" in response.json()["detail"]
    assert Run.objects.count() == 0
