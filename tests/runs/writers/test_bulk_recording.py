"""The bulk recording path stores exactly what Django's `bulk_create` stored before.

Run on SQLite by default and on PostgreSQL with DATABASE_URL set: each table's columns
are read back raw (JSON as the database keeps it) and compared with rows written for
the same cases through the ORM, the way recording wrote them before the bulk path.
"""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

import pytest
from django.db import connection

import oloproof_core as engine
from metrics.models import CachedVerdict, CaseVerdict
from metrics.services import cached_verdicts_put
from oloproof_core.cases.observations import ModelCall
from oloproof_core.evaluation.aggregate import aggregate
from oloproof_core.judging.evaluators import ExactMatch
from runs.models import CaseResult, Dataset, DatasetCase, Run
from runs.models.case_rows import case_outcome
from runs.writers.recording import chunk_cases_record, run_record

pytestmark = pytest.mark.django_db

CRITERION = "exact_label"


def varied_result(n: int = 60) -> engine.Result:
    """Cases exercising every column: errors, None expected, unicode, calls, scores."""
    exact = ExactMatch(criterion=CRITERION, field="label")
    cases = []
    for i in range(n):
        case = engine.CaseResult(
            id=f"case-{i:03d}",
            input={"q": f"question {i} — ü ☃", "nested": {"list": [1, 2.5, None, True]}},
            expected=None if i % 9 == 0 else {"label": "refund" if i % 2 else "other"},
            split="test" if i % 3 else None,
            cluster=f"user-{i % 4}" if i % 5 else None,
            measurements=engine.Measurements(
                latency_ms=10.0 + i,
                model_calls=[] if i % 4 else [ModelCall("system", "m-1", 12, 30, 0.0004, 85.5)],
            ),
        )
        if i % 11 == 0:
            case.error = engine.CaseError("RuntimeError", "backend\x00down", "Traceback …")
            case.verdicts[CRITERION] = engine.Verdict.failed_to_judge("not judged")
        else:
            case.output = {"label": "refund" if i % 3 else "other", "text": 'añ\n"q"'}
            case.artifacts = {"trace": [i, "x"]} if i % 2 else {}
            case.verdicts[CRITERION] = engine.Verdict(
                value=float(i % 3 != 0),
                feedback=None if i % 2 else "why ✓",
                scores={"part": 0.5} if i % 7 == 0 else {},
                cached=i % 5 == 0,
            )
        cases.append(case)
    metrics = _metrics(cases, exact)
    provenance = {
        "system": {"name": "bulk-bot", "version": "1"},
        "dataset": {"source": "bulk.jsonl", "digest": f"bulk-{n}"},
        "evaluators": [exact.describe()],
        "confidence": 0.95,
    }
    return engine.Result(metrics=metrics, cases=cases, provenance=provenance)


def _metrics(cases: list[engine.CaseResult], exact: ExactMatch) -> list[Any]:
    return aggregate(cases, [exact], 0.95)


def orm_rows(run: Run, dataset: Dataset, result: engine.Result) -> None:
    """What recording wrote before the bulk path, through the ORM, for another run."""
    pass_fail = frozenset({CRITERION})
    DatasetCase.objects.bulk_create(
        DatasetCase(
            dataset=dataset,
            case_id=case.id,
            position=index,
            input=case.input,
            expected=case.expected,
            split=case.split,
            cluster=case.cluster,
        )
        for index, case in enumerate(result.cases)
    )
    CaseResult.objects.bulk_create(
        CaseResult(
            run_id=run.pk,
            case_id=case.id,
            position=index,
            output=case.output if case.error is None else None,
            error_type=engine.storable_text(case.error.type)[:200] if case.error else "",
            error_message=engine.storable_text(case.error.message) if case.error else "",
            error_traceback=engine.storable_text(case.error.traceback) if case.error else "",
            latency_ms=case.latency_ms,
            cost_usd=case.cost_usd,
            artifacts=case.artifacts,
            model_calls=[asdict(call) for call in case.measurements.model_calls],
            outcome=case_outcome(case, pass_fail),
        )
        for index, case in enumerate(result.cases)
    )
    CaseVerdict.objects.bulk_create(
        CaseVerdict(
            run_id=run.pk,
            case_id=case.id,
            criterion=criterion,
            value=verdict.value,
            feedback=verdict.feedback,
            scores=dict(verdict.scores),
            error=verdict.error,
            error_traceback=verdict.traceback,
            cached=verdict.cached,
        )
        for case in result.cases
        for criterion, verdict in case.verdicts.items()
    )


def raw_rows(model: Any, owner: str, owner_id: int, order: str = "case_id") -> list[tuple]:
    """Every column but the ids, as the database returns it (JSON columns as stored)."""
    columns = [
        field.column
        for field in model._meta.concrete_fields
        if field.column not in ("id", owner, "created_at")
    ]
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT {', '.join(columns)} FROM {model._meta.db_table} "
            f"WHERE {owner} = %s ORDER BY {order}, {columns[-1]}",
            [owner_id],
        )
        return [tuple(row) for row in cursor.fetchall()]


def reference_run(recorded: Run) -> tuple[Run, Dataset]:
    dataset = Dataset.objects.create(digest="reference", source="bulk.jsonl", n_cases=60)
    run = Run.objects.create(project=recorded.project, release=recorded.release, dataset=dataset)
    return run, dataset


def test_bulk_recording_stores_the_same_rows_as_the_orm_path() -> None:
    result = varied_result()
    recorded = run_record(result=result)
    reference, reference_dataset = reference_run(recorded)
    orm_rows(reference, reference_dataset, result)

    assert raw_rows(DatasetCase, "dataset_id", recorded.dataset_id) == raw_rows(
        DatasetCase, "dataset_id", reference_dataset.pk
    )
    bulk_cases = raw_rows(CaseResult, "run_id", recorded.pk)
    assert len(bulk_cases) == 60
    assert bulk_cases == raw_rows(CaseResult, "run_id", reference.pk)
    bulk_verdicts = raw_rows(CaseVerdict, "run_id", recorded.pk)
    assert len(bulk_verdicts) == 60
    assert bulk_verdicts == raw_rows(CaseVerdict, "run_id", reference.pk)
    # And the ORM reads the bulk rows back as the values that went in.
    broken = CaseResult.objects.get(run=recorded, case_id="case-011")
    assert (broken.output, broken.error_message) == (None, "backend\ufffddown")
    called = CaseResult.objects.get(run=recorded, case_id="case-004")
    assert called.model_calls[0]["model"] == "m-1"
    assert called.output == {"label": "refund", "text": 'añ\n"q"'}


def test_a_retried_chunk_records_its_cases_once() -> None:
    result = varied_result(10)
    recorded = run_record(result=result)
    before = raw_rows(CaseResult, "run_id", recorded.pk)

    chunk_cases_record(
        run_id=recorded.pk,
        cases=result.cases[:5],
        pass_fail=frozenset({CRITERION}),
        first_position=0,
    )

    assert raw_rows(CaseResult, "run_id", recorded.pk) == before
    assert CaseVerdict.objects.filter(run=recorded).count() == 10


def test_the_verdict_cache_keeps_each_key_once_and_the_first_value() -> None:
    verdict = engine.Verdict(value=1.0, feedback="ok", scores={"a": 0.5})
    entries = [
        engine.CacheEntry(key=f"k{i % 3}", evaluator_version="v1", criterion="c", verdict=verdict)
        for i in range(9)
    ]
    cached_verdicts_put(entries=entries)
    changed = engine.Verdict(value=0.0)
    cached_verdicts_put(
        entries=[
            engine.CacheEntry(key="k0", evaluator_version="v1", criterion="c", verdict=changed)
        ]
    )

    rows = {row.key: row for row in CachedVerdict.objects.filter(key__in=["k0", "k1", "k2"])}
    assert sorted(rows) == ["k0", "k1", "k2"]
    assert rows["k0"].value == 1.0
    assert rows["k1"].scores == {"a": 0.5}
    assert rows["k1"].created_at is not None


@pytest.mark.parametrize("model", [CaseResult, CaseVerdict, DatasetCase])
def test_tables_written_per_case_keep_no_index_another_already_leads_with(model: Any) -> None:
    """Every row of these tables pays for each index: one whose columns begin another
    (the foreign key's own, beside a unique index that starts with the same column)
    answers nothing the longer one does not."""
    table = model._meta.db_table
    with connection.cursor() as cursor:
        constraints = connection.introspection.get_constraints(cursor, table)
    indexed = [
        (name, tuple(found["columns"]))
        for name, found in constraints.items()
        if (found["index"] or found["unique"]) and not found["primary_key"] and found["columns"]
    ]
    redundant = [
        name
        for name, columns in indexed
        if any(
            other != name and longer[: len(columns)] == columns and len(longer) > len(columns)
            for other, longer in indexed
        )
    ]
    assert not redundant, f"{table}: {redundant}"
