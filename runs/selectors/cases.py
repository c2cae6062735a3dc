"""A run's cases: in order, filtered and searched in the database, one case in detail.

A 100,000-case run is never loaded to show 50 of its cases: filtering and paging
happen in the database, and a page's dataset rows and verdicts are read in bulk.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.db.models import Count, QuerySet

from metrics.batching import KEY_BATCH, batches
from metrics.models import CaseVerdict, MetricEstimate
from metrics.selectors import case_verdicts_by_case, run_metric_estimates
from runs.models import CaseResult, DatasetCase, Run
from runs.models.case_rows import OUTCOMES_COUNTED
from runs.selectors.annotations import ANNOTATION_FILTERS, by_annotation
from runs.selectors.case_hints import case_not_found
from runs.selectors.case_search import SEARCH_FIELDS, case_search_filter
from runs.selectors.transcripts import case_ids_with_transcripts

CASE_OUTCOMES = ("passed", "failed", "missing")


def run_cases(*, run: Run, outcome: str | None = None) -> QuerySet[CaseResult]:
    query = CaseResult.objects.filter(run=run).order_by("position", "id")
    if outcome == "error":
        return query.exclude(error_type="")
    if outcome:
        return query.filter(outcome=outcome)
    return query


def cases_in_order(*, case_ids: list[int]) -> list[CaseResult]:
    """These case results (by primary key, from a run already read through access), in order."""
    found = CaseResult.objects.in_bulk(case_ids)
    return [found[pk] for pk in case_ids if pk in found]


def dataset_cases_by_id(*, run: Run, case_ids: list[str]) -> dict[str, DatasetCase]:
    """The dataset rows (input, expected) behind some cases of a run."""
    if run.dataset_id is None or not case_ids:
        return {}
    found: dict[str, DatasetCase] = {}
    for batch in batches(case_ids, KEY_BATCH):
        rows = DatasetCase.objects.filter(dataset_id=run.dataset_id, case_id__in=batch)
        found.update({row.case_id: row for row in rows})
    return found


def cases_whole(*, run: Run, case_ids: list[int]) -> list[dict[str, Any]]:
    """These case results of the run (primary keys) as whole cases (row, output,
    verdicts), in order: three queries for any number of them."""
    page = [case for case in cases_in_order(case_ids=case_ids) if case.run_id == run.pk]
    ids = [case.case_id for case in page]
    rows = dataset_cases_by_id(run=run, case_ids=ids)
    verdicts = case_verdicts_by_case(run_id=run.pk, case_ids=ids)
    traced = case_ids_with_transcripts(run_id=run.pk, case_ids=ids)
    return [_whole_case(case, rows.get(case.case_id), verdicts, traced) for case in page]


def _whole_case(
    case: CaseResult,
    row: DatasetCase | None,
    verdicts: dict[str, list[CaseVerdict]],
    traced: set[str],
) -> dict[str, Any]:
    return {
        "run_id": case.run_id,
        "has_transcript": case.case_id in traced,
        "case_id": case.case_id,
        "position": case.position,
        "input": None if row is None else row.input,
        "expected": None if row is None else row.expected,
        "output": case.output,
        "error": case.error_dict(),
        "latency_ms": case.latency_ms,
        "cost_usd": case.cost_usd,
        "artifacts": case.artifacts,
        "model_calls": case.model_calls,
        "outcome": case.outcome,
        "verdicts": verdicts.get(case.case_id, []),
    }


def run_verdicts(*, run_id: int, criterion: str) -> QuerySet[CaseVerdict]:
    return CaseVerdict.objects.filter(run_id=run_id, criterion=criterion).order_by("case_id")


@dataclass(frozen=True, slots=True)
class CaseFilters:
    """`outcome` applies to `criterion` when one is given, else to the case as a whole.

    `search_in` narrows the search to one of SEARCH_FIELDS; `annotation` is one of
    ANNOTATION_FILTERS (a disagreement is judged against `criterion` when one is given).
    """

    criterion: str | None = None
    outcome: str | None = None
    search: str | None = None
    search_in: str | None = None
    annotation: str | None = None


def run_criteria(*, run: Run) -> list[MetricEstimate]:
    """The run's criteria (not sub-scores), with their value type and range."""
    return [
        estimate for estimate in run_metric_estimates(run_id=run.pk) if not estimate.is_sub_score
    ]


def run_case_table(*, run: Run, filters: CaseFilters) -> QuerySet[CaseResult]:
    """The run's cases in order, filtered in the database.

    For a criterion, "passed" is a verdict at the top of its range (1 for pass/fail),
    "failed" an observed verdict below it, "missing" a verdict without a value. The search
    finds cases holding every word in their input, expected value, output, error or id
    (runs.selectors.case_search, through the full-text indexes).
    """
    query = run_cases(run=run)
    if filters.criterion and filters.outcome in CASE_OUTCOMES:
        query = _by_criterion_outcome(query, run, filters.criterion, filters.outcome)
    elif filters.outcome:
        query = run_cases(run=run, outcome=filters.outcome)
    search = (filters.search or "").strip()
    if search:
        fields = (filters.search_in,) if filters.search_in in SEARCH_FIELDS else SEARCH_FIELDS
        query = query.filter(case_search_filter(run=run, text=search, fields=fields))
    if filters.annotation in ANNOTATION_FILTERS:
        top = criterion_top(run=run, criterion=filters.criterion) if filters.criterion else 1.0
        query = by_annotation(
            query, run=run, kind=filters.annotation, criterion=filters.criterion, top=top
        )
    return query


def criterion_top(*, run: Run, criterion: str) -> float:
    """The value a criterion's verdict must reach to pass: the top of its range (1 by default)."""
    estimate = (
        MetricEstimate.objects.filter(run=run, metric=criterion)
        .only("score_range", "value_type")
        .first()
    )
    if estimate is not None and estimate.value_type == "score" and len(estimate.score_range) == 2:
        return float(estimate.score_range[1])
    return 1.0


def _by_criterion_outcome(
    query: QuerySet[CaseResult], run: Run, criterion: str, outcome: str | None
) -> QuerySet[CaseResult]:
    top = criterion_top(run=run, criterion=criterion)
    verdicts = CaseVerdict.objects.filter(run_id=run.pk, criterion=criterion)
    if outcome == "passed":
        verdicts = verdicts.filter(value__gte=top)
    elif outcome == "failed":
        verdicts = verdicts.filter(value__lt=top)
    else:
        # A missing verdict is recorded as a row without a value (the system or the
        # evaluator failed); a case with no row yet is pending, not missing.
        verdicts = verdicts.filter(value__isnull=True)
    return query.filter(case_id__in=verdicts.values("case_id"))


def run_outcome_counts(*, run: Run) -> dict[str, int]:
    """How many of the run's cases passed, failed, are missing or pending.

    From the counts the recording keeps on the run, so a million-case run is not
    counted on every page; a run whose rows were written some other way (no counts
    kept) is counted in the database.
    """
    counts = dict.fromkeys(CaseResult.Outcome.values, 0)
    kept = {outcome: getattr(run, f"outcome_{outcome}") for outcome in OUTCOMES_COUNTED}
    if None not in kept.values():
        counts.update(kept)
        return counts
    rows = CaseResult.objects.filter(run=run).values("outcome").annotate(n=Count("id"))
    counts.update({row["outcome"]: row["n"] for row in rows})
    return counts


@dataclass(frozen=True, slots=True)
class CaseDetail:
    case: CaseResult
    row: DatasetCase | None
    verdicts: list[CaseVerdict]
    position: int


def case_detail(*, run: Run, case_id: str) -> CaseDetail:
    case = CaseResult.objects.filter(run=run, case_id=case_id).first()
    if case is None:
        raise case_not_found(run, case_id)
    row = None
    if run.dataset_id is not None:
        row = DatasetCase.objects.filter(dataset_id=run.dataset_id, case_id=case_id).first()
    verdicts = list(CaseVerdict.objects.filter(run=run, case_id=case_id).order_by("criterion"))
    return CaseDetail(case=case, row=row, verdicts=verdicts, position=case.position)
