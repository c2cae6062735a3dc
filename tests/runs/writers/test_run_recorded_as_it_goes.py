"""A run recorded as it goes reads back exactly like the same run recorded whole.

`evaluate(..., keep_cases=False)` into the Django store opens the run (running), writes
each batch of cases, verdicts and (for a new dataset) dataset rows as it finishes, and
concludes the run at the end. Run on SQLite by default and on PostgreSQL with
DATABASE_URL set.
"""

from __future__ import annotations

from typing import Any

import pytest

from oloproof import evaluate
from oloproof.evaluators import ExactMatch
from oloproof_core import Result
from oloproof_core.evaluation import recording_as_it_goes
from runs.models import DatasetCase, Run
from runs.selectors.cases import CaseFilters, run_case_table
from runs.selectors.results import run_result
from runs.store import DjangoStore
from tests.runs.conftest import short_answer, support_rows

pytestmark = pytest.mark.django_db

N = 2 * recording_as_it_goes.BATCH + 300
POLICY = {"version": 1, "rules": [{"metric": "exact_label", "min": 0.5}]}


def answer(case: dict[str, Any]) -> dict[str, str]:
    number = int(case["question"].rsplit("#", 1)[1])
    if number % 97 == 5:
        raise ConnectionError("upstream gateway unreachable")
    label = "refund" if "refund" in case["question"] else "other"
    return {"label": label if number % 10 else "wrong"}


def recorded(*, keep_cases: bool, rows: list[dict[str, Any]] | None = None) -> Run:
    result = evaluate(
        answer,
        rows if rows is not None else support_rows(N),
        [ExactMatch(criterion="exact_label", field="label"), short_answer],
        policy=POLICY,
        store=DjangoStore(),
        isolation="thread",
        keep_cases=keep_cases,
    )
    return Run.objects.get(pk=int(str(result.run_id)))


def comparable(result: Result) -> tuple[Any, ...]:
    cases = [
        (
            case.id,
            case.input,
            case.expected,
            case.cluster,
            case.output,
            None if case.error is None else (case.error.type, case.error.message),
            {name: (v.value, v.feedback, v.error) for name, v in case.verdicts.items()},
        )
        for case in result.cases
    ]
    metrics = [
        (m.metric, m.estimate, str(m.interval), m.n_observed, m.n_missing) for m in result.metrics
    ]
    return cases, metrics, result.extras.get("gate", {}).get("outcome")


def test_a_run_recorded_as_it_goes_reads_back_like_one_recorded_whole() -> None:
    whole = recorded(keep_cases=True)
    as_it_goes = recorded(keep_cases=False)
    assert as_it_goes.status == Run.Status.SUCCEEDED
    assert (as_it_goes.cases_total, as_it_goes.cases_done) == (N, N)
    assert as_it_goes.cases_failed == whole.cases_failed > 0
    assert as_it_goes.dataset_id == whole.dataset_id
    assert DatasetCase.objects.filter(dataset_id=whole.dataset_id).count() == N
    assert comparable(run_result(run=as_it_goes)) == comparable(run_result(run=whole))
    assert as_it_goes.provenance["dataset"]["n_cases"] == N
    assert as_it_goes.policy_digest == whole.policy_digest != ""
    assert as_it_goes.started_at is not None
    assert as_it_goes.finished_at is not None
    # The case table and its search read the batches' rows, the last batch's included.
    table = run_case_table(run=as_it_goes, filters=CaseFilters(search="upstream"))
    assert len(table) == whole.cases_failed


def test_a_new_dataset_gets_its_rows_from_the_batches() -> None:
    rows = support_rows(N)
    for row in rows:
        row["input"]["note"] = "first seen in a run recorded as it goes"
    run = recorded(keep_cases=False, rows=rows)
    stored = DatasetCase.objects.filter(dataset_id=run.dataset_id).order_by("position")
    assert stored.count() == N
    assert [row.case_id for row in stored[:3]] == ["case_00000", "case_00001", "case_00002"]
    assert stored.last().position == N - 1  # type: ignore[union-attr]
    assert recorded(keep_cases=True, rows=rows).dataset_id == run.dataset_id


class StoppedByTheTestError(Exception):
    pass


def test_a_run_that_stops_midway_is_marked_failed_with_its_reason() -> None:
    (_, first_end), _ = recording_as_it_goes.batch_bounds(N)[:2]

    def stop_in_the_second_batch(phase: str, done: int, total: int) -> None:
        if done > first_end + 10:
            raise StoppedByTheTestError("stopped by the test")

    with pytest.raises(StoppedByTheTestError):
        evaluate(
            answer,
            support_rows(N),
            [ExactMatch(criterion="exact_label", field="label")],
            store=DjangoStore(),
            isolation="thread",
            keep_cases=False,
            progress=stop_in_the_second_batch,
        )
    run = Run.objects.get()
    assert run.status == Run.Status.FAILED
    assert "StoppedByTheTestError: stopped by the test" in run.error
    assert run.cases_done == first_end
    assert run.case_results.count() == first_end

    # Its dataset was left with the first batch's rows; the next such run completes them.
    assert DatasetCase.objects.filter(dataset_id=run.dataset_id).count() < N
    again = recorded(keep_cases=False, rows=support_rows(N))
    assert again.dataset_id == run.dataset_id
    assert DatasetCase.objects.filter(dataset_id=run.dataset_id).count() == N
