"""A large run on the workers' path: planning in a fixed number of statements, a conclusion
read from narrow columns in memory that grows only by them, and a dataset too large for
the server refused before anything is queued."""

from __future__ import annotations

import json
import tracemalloc
from array import array
from pathlib import Path
from typing import Any

import pytest
import yaml
from django.db import connection, transaction
from django.test import Client
from django.test.utils import CaptureQueriesContext

import oloproof
import oloproof_core as engine
from metrics.models import RunValueColumns
from metrics.services import run_value_columns_put
from metrics.value_columns import value_columns_encode
from oloproof.cli import main as cli_main
from oloproof_core import ConfigError
from oloproof_core.results.columns import spill
from oloproof_core.stats import _spilled as stats_spilled
from runs.access import LOCAL
from runs.errors import RunConfigInvalidError
from runs.models import Dataset, Run, RunChunk
from runs.selectors import case_columns
from runs.selectors.case_columns import case_ids_json_sql, run_case_columns
from runs.selectors.results import run_result
from runs.services import run_submit
from runs.store import DjangoStore
from runs.workers import finalising, planning
from runs.writers.projects import code_root_register, project_default_ensure
from runs.writers.recording import chunk_cases_record
from tests.support.column_cases import CRITERIA, conclude, figures, judged_cases
from tests.support.platform import write_project


@pytest.fixture(autouse=True)
def code_root(tmp_path: Path, db: None) -> None:
    """Every project of a test lies in its folder: one code root for them all."""
    code_root_register(by=LOCAL, project=project_default_ensure(), path=str(tmp_path))


def submitted(folder: Path, n_cases: int) -> Run:
    config_path = write_project(folder, n_cases=n_cases)
    with transaction.atomic():
        return run_submit(
            config=yaml.safe_load(config_path.read_text()), base_dir=str(config_path.parent)
        )


@pytest.mark.django_db
def test_planning_sends_as_many_statements_for_3000_cases_as_for_200(
    tmp_path: Path, settings: Any
) -> None:
    # A chunk a case: 3,000 chunks are more than `bulk_create` puts in one statement on
    # SQLite (32,766 parameters over 12 columns).
    settings.OLOPROOF_CHUNK_SIZE = 1
    # The dataset's rows go in blocks of this many (one COPY on PostgreSQL at any size).
    settings.OLOPROOF_RECORD_CHUNK_SIZE = 5000
    # The first submission creates the system and release the two measured ones find.
    planning.run_start(run_id=submitted(tmp_path / "first", 10).pk)
    counts = []
    for n_cases in (200, 3000):
        with CaptureQueriesContext(connection) as submitting:
            run = submitted(tmp_path / str(n_cases), n_cases)
        with CaptureQueriesContext(connection) as planning_it:
            assert planning.run_start(run_id=run.pk) == "started"
        assert RunChunk.objects.filter(run=run).count() == n_cases
        counts.append((len(submitting), len(planning_it)))
    # Submitting records the dataset's rows in bulk (COPY on PostgreSQL), planning its
    # chunks: neither grows with the rows or the chunks.
    assert counts[0] == counts[1]


@pytest.mark.django_db
def test_the_conclusion_from_columns_is_the_conclusion_from_whole_cases() -> None:
    recorded = conclude(judged_cases(200, 4), digest="columns-vs-cases")
    run = Run.objects.get(pk=DjangoStore().record_run(recorded))

    whole = conclude(run_result(run=run).cases)
    narrow = conclude(run_case_columns(run=run, criteria=CRITERIA))

    assert isinstance(narrow.cases, engine.CaseColumns)
    assert figures(narrow) == figures(whole)
    assert figures(narrow)["metrics"] == figures(recorded)["metrics"]
    assert narrow.gate.outcome == "fail"  # the missing rate; others undecided or passing
    assert_same_value_columns(run, narrow, whole)


def assert_same_value_columns(run: Run, narrow: engine.Result, whole: engine.Result) -> None:
    """The value columns kept from the narrow conclusion are those of the whole one; their
    ids are written by the database, not encoded by the process."""
    whole_fields = value_columns_encode(whole)
    assert value_columns_encode(narrow)["case_ids"] is None
    run_value_columns_put(run_id=run.pk, result=narrow, case_ids_query=case_ids_json_sql(run.pk))
    stored = RunValueColumns.objects.get(run=run)
    assert json.loads(stored.case_ids) == json.loads(whole_fields.pop("case_ids"))
    kept = {name: getattr(stored, name) for name in whole_fields}
    for name in ("values", "cluster_codes", "read_order"):
        kept[name] = None if kept[name] is None else bytes(kept[name])
        found = whole_fields[name]
        whole_fields[name] = None if found is None else bytes(found)
    assert kept == whole_fields


SIMPLE_POLICY: dict[str, Any] = {
    "version": 1,
    "rules": [{"metric": "exact", "min": 0.5}, {"missing": {"max_rate": 0.2}}],
}


@pytest.mark.django_db
def test_without_clusters_the_conclusion_reads_no_case_id_into_memory() -> None:
    cases = judged_cases(300, 5)
    for case in cases:
        case.cluster = None
    recorded = conclude(cases, policy=SIMPLE_POLICY, digest="no-clusters")
    run = Run.objects.get(pk=DjangoStore().record_run(recorded))

    narrow = conclude(run_case_columns(run=run, criteria=CRITERIA), policy=SIMPLE_POLICY)
    whole = conclude(run_result(run=run).cases, policy=SIMPLE_POLICY)

    # Pass/fail with failures, scores with missing verdicts, sub-scores seen late: every
    # figure to the last digit, read in the order the ids' digest prefixes gave.
    assert figures(narrow) == figures(whole)
    assert figures(narrow)["metrics"] == figures(recorded)["metrics"]
    assert narrow.gate is not None
    assert narrow.gate.outcome == "pass"
    ids = narrow.cases.ids
    assert isinstance(ids, engine.DeferredIds)
    assert not ids.loaded
    assert_same_value_columns(run, narrow, whole)
    assert not ids.loaded
    # Asked for, the ids come from the store, in the run's order.
    assert list(ids) == [case.id for case in cases]


@pytest.mark.django_db
def test_the_database_sorts_the_cases_in_the_statistics_reading_order() -> None:
    cases = judged_cases(120, 6)
    for index, case in enumerate(cases):  # ids beyond ASCII, of several lengths
        case.id = ["çağrı", "Grüße", "日本", "a", "Z"][index % 5] + f"-{index * 7919 % 1000}"
        case.cluster = None
    recorded = conclude(cases, policy=SIMPLE_POLICY, digest="unicode-ids")
    run = Run.objects.get(pk=DjangoStore().record_run(recorded))

    columns = run_case_columns(run=run, criteria=CRITERIA, scored={"quality"})
    narrow = conclude(columns, policy=SIMPLE_POLICY)

    assert isinstance(columns, engine.SpilledColumns)
    assert figures(narrow) == figures(conclude(run_result(run=run).cases, policy=SIMPLE_POLICY))
    expected = engine.stats.ReadOrder.of([case.id for case in cases]).indices.tolist()
    assert columns.read_order is not None
    assert columns.read_order.indices.tolist() == expected
    run_value_columns_put(run_id=run.pk, result=narrow, case_ids_query=case_ids_json_sql(run.pk))
    stored = bytes(RunValueColumns.objects.get(run=run).read_order)
    assert array("i", stored).tolist() == expected


# Finalising's memory -------------------------------------------------------------------


def running_run(folder: Path, n_cases: int) -> Run:
    """A submitted, planned run whose chunks all recorded their cases: ready to finalise."""
    run = submitted(folder, n_cases)
    assert planning.run_start(run_id=run.pk) == "started"
    pass_fail = frozenset({"exact_label", "short_label"})
    for start in range(0, n_cases, 2000):
        cases = []
        for i in range(start, min(start + 2000, n_cases)):
            case = engine.CaseResult(id=f"case_{i:05d}", input={}, expected=None)
            case.output = {"label": "refund", "reasoning": "because " * 20}
            case.verdicts["exact_label"] = engine.Verdict(value=float(i % 9 != 0), feedback="ok")
            case.verdicts["short_label"] = engine.Verdict(value=1.0)
            cases.append(case)
        chunk_cases_record(run_id=run.pk, cases=cases, pass_fail=pass_fail, first_position=start)
    RunChunk.objects.filter(run=run).update(status=RunChunk.Status.DONE, claimed_by="test:1")
    return Run.objects.get(pk=run.pk)


def finalising_peak(run: Run) -> int:
    """Python's peak memory while the run is finalised (concluded again if it was)."""
    Run.objects.filter(pk=run.pk).update(status=Run.Status.RUNNING)
    tracemalloc.start()
    try:
        assert finalising.run_finalise(run_id=run.pk) == "succeeded"
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def held_in_memory(run: Run, criteria: tuple[str, ...]) -> int:
    """What the run's columns hold once loaded into memory, as readers that need them
    whole load them (clusters, a baseline, a sequential look)."""
    columns = run_case_columns(run=run, criteria=criteria)
    assert isinstance(columns, engine.SpilledColumns)
    assert columns.nbytes() == 0  # nothing per case until asked for
    assert columns.values  # loads them
    return columns.nbytes()


@pytest.mark.slow
@pytest.mark.django_db
def test_finalising_memory_does_not_grow_with_the_run(
    tmp_path: Path, settings: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    settings.OLOPROOF_CHUNK_SIZE = 2000
    small, large = running_run(tmp_path / "small", 5000), running_run(tmp_path / "large", 20000)
    criteria = ("exact_label", "short_label")
    loaded = [held_in_memory(run, criteria) for run in (small, large)]
    narrow = loaded[1] - loaded[0]  # what 15,000 more cases' columns would hold

    # The columns stay in files, read a block at a time: with blocks far shorter than
    # either run (a worker's are 16,384 values), growing the run by 15,000 cases leaves
    # the peak where it was. Measured: within 10 KB either way on SQLite and on
    # PostgreSQL, against 360 KB for the columns held in memory.
    monkeypatch.setattr(spill, "SPILL_BLOCK", 1024)
    monkeypatch.setattr(stats_spilled, "READ_BLOCK", 1024)
    monkeypatch.setattr(case_columns, "_BLOCK", 500)  # rows fetched at once
    finalising_peak(running_run(tmp_path / "warm", 3000))  # every path taken once
    small_peak = finalising_peak(small)
    grown = finalising_peak(large) - small_peak
    assert grown < narrow / 20, (grown, narrow)
    monkeypatch.undo()

    # Reading every case whole, as finalising once did, grows by far more (160
    # times the columns' growth): the bound above tells the two apart.
    monkeypatch.setattr(
        finalising,
        "run_case_columns",
        lambda *, run, criteria, scored=(): run_result(run=run).cases,
    )
    grown_whole = finalising_peak(large) - finalising_peak(small)
    assert grown_whole > 10 * narrow, (grown_whole, narrow)


# Too many cases ------------------------------------------------------------------------


LIMIT_NAMED = ("31 cases", "over the limit of 30 cases in one run", "OLOPROOF_MAX_CASES")


@pytest.mark.django_db
def test_a_dataset_over_the_limit_is_refused_at_submission_naming_the_setting(
    tmp_path: Path, settings: Any
) -> None:
    settings.OLOPROOF_MAX_CASES = 30
    with pytest.raises(RunConfigInvalidError) as refused:
        submitted(tmp_path / "big", 31)
    [(key, message)] = refused.value.problems
    assert key == "dataset"
    assert all(part in message for part in LIMIT_NAMED), message
    assert "dataset 'data.jsonl' has 31 cases" in message
    assert (Run.objects.count(), Dataset.objects.count()) == (0, 0)
    settings.OLOPROOF_MAX_CASES = 31
    assert submitted(tmp_path / "fits", 31).cases_total == 31


@pytest.mark.django_db
def test_every_face_refuses_it_with_that_message(
    tmp_path: Path, settings: Any, teammate: Any, token_for: Any, capsys: Any
) -> None:
    settings.OLOPROOF_MAX_CASES = 30
    config = write_project(tmp_path / "big", n_cases=31)
    with pytest.raises(ConfigError) as refused:
        oloproof.submit(config)
    assert all(part in str(refused.value) for part in LIMIT_NAMED)
    assert f"{config}:2: dataset 'data.jsonl'" in str(refused.value)

    assert cli_main(["run", str(config), "--submit"]) != 0
    printed = capsys.readouterr().err
    assert all(part in printed for part in LIMIT_NAMED), printed
    assert "Traceback" not in printed

    fields = {"project": "default", "kind": "evaluation", "base_dir": str(config.parent),
              "system": "bot.py:answer", "dataset": "data.jsonl", "policy": "",
              "evaluators": "ExactMatch: {criterion: exact_label, field: label}"}  # fmt: skip
    client = Client()
    client.force_login(teammate)
    form = client.post("/runs/new/", fields).context["form"]
    assert all(part in form.errors["dataset"][0] for part in LIMIT_NAMED)

    response = Client().post(
        "/api/runs",
        {"config": yaml.safe_load(config.read_text()), "base_dir": str(config.parent)},
        content_type="application/json",
        HTTP_AUTHORIZATION=f"Bearer {token_for(teammate)}",
    )
    assert response.status_code == 400
    assert all(part in response.json()["detail"] for part in LIMIT_NAMED)
    assert Run.objects.count() == 0
