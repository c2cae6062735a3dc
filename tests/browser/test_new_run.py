"""The New-run form in a real browser: a config the workers could not run shows every
problem beside its field and queues nothing; once corrected, it queues the run."""

from __future__ import annotations

from pathlib import Path

import pytest

from runs.access import LOCAL
from runs.models import Dataset, Run
from runs.writers.projects import code_root_register, project_default_ensure
from tests.browser.conftest import Visit
from tests.browser.test_dashboard import make_user
from tests.support.platform import write_project

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

NEVER_PASSING = "version: 1\nrules:\n  - metric: exact_label\n    min: 1.0\n"
REACHABLE = "version: 1\nrules:\n  - metric: exact_label\n    min: 0.5\n"


def fill(visit: Visit, **fields: str) -> None:
    for name, value in fields.items():
        visit.page.fill(f"[name={name}]", value)
    visit.page.click("button.primary")
    visit.page.wait_for_load_state("load")


def field_errors(visit: Visit, name: str) -> str:
    """The error list rendered right after the field's label."""
    return str(
        visit.page.locator(f"label:has([name={name}]) + ul.errorlist").inner_text(timeout=2000)
    )


def test_the_form_shows_every_problem_queues_nothing_then_queues_the_corrected_run(
    visit: Visit, tmp_path: Path
) -> None:
    write_project(tmp_path, n_cases=6)
    (tmp_path / "release.yaml").write_text(NEVER_PASSING, encoding="utf-8")
    (tmp_path / "good.yaml").write_text(REACHABLE, encoding="utf-8")
    code_root_register(by=LOCAL, project=project_default_ensure(), path=str(tmp_path))
    make_user("rita", "runner")
    visit.login("rita")
    visit.go("/runs/new/")

    fill(
        visit,
        base_dir=str(tmp_path),
        system="bot.py:answr",
        dataset="missing.jsonl",
        evaluators="ExactMatch: {criterion: exact_label, field: label}",
        policy="release.yaml",
    )
    assert "/runs/new/" in visit.page.url
    system = field_errors(visit, "system")
    assert "bot.py has no attribute 'answr' (did you mean 'answer'?)" in system
    dataset = field_errors(visit, "dataset")
    assert "dataset 'missing.jsonl' not found" in dataset
    assert str(tmp_path / "missing.jsonl") in dataset
    policy = field_errors(visit, "policy")
    assert f"{tmp_path / 'release.yaml'}:3: rules[0].min: 1 can never pass" in policy
    assert "give a threshold inside the range" in policy
    # What was typed is still there to correct, and nothing was queued or recorded.
    assert visit.page.input_value("[name=system]") == "bot.py:answr"
    assert visit.page.input_value("[name=base_dir]") == str(tmp_path)
    assert visit.page.locator(".messages .success").count() == 0
    assert Run.objects.count() == 0
    assert Dataset.objects.count() == 0

    fill(visit, system="bot.py:answer", dataset="data.jsonl", policy="good.yaml")
    visit.page.wait_for_url("**/runs/*/")
    run = Run.objects.get()
    assert visit.page.url.endswith(f"/runs/{run.pk}/")
    assert f"Run {run.pk} submitted" in visit.page.inner_text(".messages")
    assert run.config["system"] == "bot.py:answer"
    assert run.cases_total == 6
    assert not visit.dialogs


def test_each_kind_sits_beside_its_words_and_the_optimization_fields_show_for_an_optimization(
    visit: Visit,
) -> None:
    make_user("rita", "runner")
    visit.login("rita")
    visit.page.set_viewport_size({"width": 1280, "height": 800})
    visit.go("/runs/new/")

    optimization = visit.page.locator(".optimization-only")
    assert not optimization.is_visible()  # an evaluation is the choice made
    for value in ("evaluation", "optimization"):
        radio = visit.page.locator(f"input[name=kind][value={value}]").bounding_box()
        words = visit.page.locator(f"label:has(input[name=kind][value={value}])").bounding_box()
        assert radio is not None
        assert words is not None
        # The button is at the start of its label, on the same line as the words.
        assert abs(radio["x"] - words["x"]) < 12, (value, radio, words)
        assert words["width"] < 300, (value, words)
        assert abs((radio["y"] + radio["height"] / 2) - (words["y"] + words["height"] / 2)) < 10
    visit.page.check("input[name=kind][value=optimization]")
    assert optimization.is_visible()
    visit.page.check("input[name=kind][value=evaluation]")
    assert not optimization.is_visible()
