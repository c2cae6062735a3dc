"""`repeats: 2` in an optimization config, from a user's folder: `oloproof optimize` runs
examples/optimize_calc with every case twice, counts each repeat as a metric call, and
proves the winner on test with each case's repeats as one cluster, in the runs it records
in the folder's store."""

from __future__ import annotations

import shutil
from pathlib import Path

from tests.journeys.conftest import REPO, optimize_in_folder, run_user
from tests.support.fake_openai import FakeOpenAI
from tests.support.optimize_task import TASK_MODEL, model_environment, serve_task

STORE_REPORT = """
import json
from oloproof.cli._django import django_ready

django_ready()
from runs.models import CaseResult, Optimization

optimization = Optimization.objects.get()
runs = [optimization.seed_test_run, optimization.winner_test_run]
print(json.dumps({
    "splits": optimization.progress["splits"],
    "test_runs": [
        {"repeats": run.provenance.get("repeats"),
         "case_ids": list(CaseResult.objects.filter(run=run).order_by("position")
                          .values_list("case_id", flat=True))}
        for run in runs
    ],
}))
"""


def test_an_optimization_with_repeats_runs_and_proves_every_case_twice(
    tmp_path: Path, fake_openai: FakeOpenAI
) -> None:
    folder = tmp_path / "calc-opt"
    shutil.copytree(REPO / "examples" / "optimize_calc", folder)
    config = folder / "optimize.yaml"
    config.write_text(config.read_text(encoding="utf-8") + "repeats: 2\n", encoding="utf-8")
    serve_task(fake_openai)

    outcome, stored = optimize_in_folder(
        folder, STORE_REPORT, **model_environment(fake_openai.base_url)
    )
    splits = stored["splits"]
    assert splits["repeats"] == 2
    test_ids = splits["ids"]["test"]
    assert test_ids[:2] == [test_ids[0][:-3] + "#r1", test_ids[0][:-3] + "#r2"]
    assert splits["counts"]["val"] == 2 * 4  # the example's 4 val cases, twice each
    assert outcome["winner"]["val"]["n"] == 8
    # The system ran once per repeat: in the search, and on test for the seed and winner;
    # every repeat asked for was a metric call, within the budget.
    task_calls = fake_openai.models_asked().count(TASK_MODEL)
    assert task_calls == outcome["evaluations"]["run"] + 2 * len(test_ids)
    calls = outcome["evaluations"]["run"] + outcome["evaluations"]["served"]
    assert outcome["budget_used"]["metric_calls"] == calls <= 150
    assert outcome["proof"]["winner"]["test"]["n"] == len(test_ids)
    for run in stored["test_runs"]:  # the seed's and the winner's run on test
        assert run["case_ids"] == test_ids
        assert run["repeats"]["repeats"] == 2
        assert run["repeats"]["cases"] == len(test_ids) // 2


def test_an_optimization_with_repeats_auto_is_refused_before_any_model_call(
    tmp_path: Path, fake_openai: FakeOpenAI
) -> None:
    folder = tmp_path / "calc-opt"
    shutil.copytree(REPO / "examples" / "optimize_calc", folder)
    config = folder / "optimize.yaml"
    config.write_text(config.read_text(encoding="utf-8") + "repeats: auto\n", encoding="utf-8")
    serve_task(fake_openai)
    done = run_user(
        ["oloproof", "optimize", "optimize.yaml"], folder, **model_environment(fake_openai.base_url)
    )
    assert done.returncode == 3, done.stdout + done.stderr
    assert "repeats: auto reads earlier runs of a release's cases and is not available" in (
        done.stderr
    )
    assert "Traceback" not in done.stderr
    assert fake_openai.request_count == 0
