"""Reads behind the dashboard pages: history, case tables, releases, gates, comparisons.

Every read is bounded: a page of runs or cases costs a fixed number of queries
whatever the history or the run size, and filtering and paging happen in the
database (a 100,000-case run is never loaded to show 50 of its cases).
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from django.core.cache import cache
from django.db import connection
from django.db.models import Count, Exists, F, OuterRef, Q, QuerySet, Subquery, TextField
from django.db.models.functions import Cast

from metrics.models import CaseVerdict, MetricEstimate
from metrics.selectors import run_metric_estimates
from oloproof_core.aggregate import MetricEstimate as EngineMetricEstimate
from oloproof_core.case import CaseResult as EngineCaseResult
from oloproof_core.compare import Comparison, compare_runs
from oloproof_core.result import Result
from oloproof_core.stats import Interval
from oloproof_core.verdict import Verdict
from runs.errors import NotFoundError
from runs.models import Approval, CaseResult, Dataset, DatasetCase, Gate, Release, Run, System
from runs.selectors import run_cases, runs_list

CASE_OUTCOMES = ("passed", "failed", "missing")
LIVE_STATUSES = (Run.Status.QUEUED, Run.Status.RUNNING, Run.Status.FINALISING)


def runs_in_order(*, run_ids: Sequence[int]) -> list[Run]:
    """These runs with release, system, dataset and gate, in the order of `run_ids`.

    The history is paged over bare ids (an index scan however deep the page) and
    only the page's own runs are then read with their joins.
    """
    found = runs_list().in_bulk(list(run_ids))
    return [found[run_id] for run_id in run_ids if run_id in found]


def runs_headline_metrics(*, run_ids: Sequence[int]) -> dict[int, list[MetricEstimate]]:
    """Each run's criterion-level estimates (no sub-scores), in one query."""
    grouped: dict[int, list[MetricEstimate]] = defaultdict(list)
    rows = MetricEstimate.objects.filter(run_id__in=list(run_ids), metric=F("criterion"))
    for estimate in rows.order_by("run_id", "position", "id"):
        grouped[estimate.run_id].append(estimate)
    return dict(grouped)


@dataclass(frozen=True, slots=True)
class FilterChoices:
    systems: list[str]
    releases: list[str]
    datasets: list[Dataset]


def run_filter_choices() -> FilterChoices:
    """What the run history can be filtered by: known systems, versions and datasets."""
    versions = Release.objects.order_by("version").values_list("version", flat=True).distinct()
    return FilterChoices(
        systems=list(System.objects.order_by("name").values_list("name", flat=True)),
        releases=[version for version in versions if version],
        datasets=list(Dataset.objects.order_by("-created_at").only("digest", "source")[:200]),
    )


def runs_live_status(*, run_ids: Iterable[int]) -> list[dict[str, Any]]:
    """Status and progress of some runs, for pages that follow queued and running runs."""
    rows = Run.objects.filter(pk__in=list(run_ids)[:200]).values(
        "id", "status", "cases_done", "cases_total", "cases_failed", "error"
    )
    return [dict(row) for row in rows]


@dataclass(frozen=True, slots=True)
class CaseFilters:
    """`outcome` applies to `criterion` when one is given, else to the case as a whole."""

    criterion: str | None = None
    outcome: str | None = None
    search: str | None = None


def run_criteria(*, run: Run) -> list[MetricEstimate]:
    """The run's criteria (not sub-scores), with their value type and range."""
    return [
        estimate for estimate in run_metric_estimates(run_id=run.pk) if not estimate.is_sub_score
    ]


def run_case_table(*, run: Run, filters: CaseFilters) -> QuerySet[CaseResult]:
    """The run's cases in order, filtered in the database.

    For a criterion, "passed" is a verdict at the top of its range (1 for pass/fail),
    "failed" an observed verdict below it, "missing" a verdict without a value. The search
    looks in the case id, the output and the error message.
    """
    query = run_cases(run=run)
    if filters.criterion and filters.outcome in CASE_OUTCOMES:
        query = _by_criterion_outcome(query, run, filters.criterion, filters.outcome)
    elif filters.outcome in CASE_OUTCOMES:
        query = query.filter(outcome=filters.outcome)
    search = (filters.search or "").strip()
    if search:
        query = query.annotate(output_text=Cast("output", TextField())).filter(
            Q(case_id__icontains=search)
            | Q(output_text__icontains=search)
            | Q(error_message__icontains=search)
        )
    return query


def _by_criterion_outcome(
    query: QuerySet[CaseResult], run: Run, criterion: str, outcome: str | None
) -> QuerySet[CaseResult]:
    top = 1.0
    estimate = (
        MetricEstimate.objects.filter(run=run, metric=criterion)
        .only("score_range", "value_type")
        .first()
    )
    if estimate is not None and estimate.value_type == "score" and len(estimate.score_range) == 2:
        top = float(estimate.score_range[1])
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
    """How many of the run's cases passed, failed, are missing or pending."""
    rows = CaseResult.objects.filter(run=run).values("outcome").annotate(n=Count("id"))
    counts = dict.fromkeys(CaseResult.Outcome.values, 0)
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
        raise NotFoundError(f"run {run.pk} has no case {case_id!r}")
    row = None
    if run.dataset_id is not None:
        row = DatasetCase.objects.filter(dataset_id=run.dataset_id, case_id=case_id).first()
    verdicts = list(CaseVerdict.objects.filter(run=run, case_id=case_id).order_by("criterion"))
    return CaseDetail(case=case, row=row, verdicts=verdicts, position=case.position)


def system_get(*, system_id: int) -> System:
    system = System.objects.filter(pk=system_id).first()
    if system is None:
        raise NotFoundError(f"no system with id {system_id}")
    return system


@dataclass(slots=True)
class ReleasePoint:
    """A release with its latest successful run, that run's metrics, gate and approvals."""

    release: Release
    run_count: int
    run: Run | None
    metrics: list[MetricEstimate] = field(default_factory=list)
    gate: Gate | None = None
    approvals: list[Approval] = field(default_factory=list)


def system_release_history(*, system: System) -> list[ReleasePoint]:
    """The system's releases, oldest first; five queries however many releases and runs."""
    latest = Run.objects.filter(release=OuterRef("pk"), status=Run.Status.SUCCEEDED).order_by(
        "-created_at", "-id"
    )
    releases = list(
        Release.objects.filter(system=system)
        .annotate(latest_run_id=Subquery(latest.values("pk")[:1]), run_count=Count("runs"))
        .order_by("created_at", "id")
    )
    run_ids = [release.latest_run_id for release in releases if release.latest_run_id]
    runs = Run.objects.select_related("dataset").in_bulk(run_ids)
    metrics: dict[int, list[MetricEstimate]] = defaultdict(list)
    for estimate in MetricEstimate.objects.filter(run_id__in=run_ids).order_by("position", "id"):
        metrics[estimate.run_id].append(estimate)
    gates = {gate.run_id: gate for gate in Gate.objects.filter(run_id__in=run_ids)}
    approvals: dict[int, list[Approval]] = defaultdict(list)
    for approval in Approval.objects.filter(gate__run_id__in=run_ids).select_related(
        "user", "gate"
    ):
        approvals[approval.gate.run_id].append(approval)
    points = []
    for release in releases:
        run_id = release.latest_run_id
        points.append(
            ReleasePoint(
                release=release,
                run_count=release.run_count,
                run=runs.get(run_id) if run_id else None,
                metrics=metrics.get(run_id, []) if run_id else [],
                gate=gates.get(run_id) if run_id else None,
                approvals=approvals.get(run_id, []) if run_id else [],
            )
        )
    return points


def systems_overview() -> QuerySet[System]:
    return System.objects.annotate(
        release_count=Count("releases", distinct=True), run_count=Count("releases__runs")
    ).order_by("name")


def gates_pending() -> QuerySet[Gate]:
    """Gates nobody has approved or rejected yet, newest first."""
    return (
        Gate.objects.filter(~Exists(Approval.objects.filter(gate=OuterRef("pk"))))
        .select_related("run__release__system", "run__dataset")
        .order_by("-decided_at", "-id")
    )


def approvals_audit() -> QuerySet[Approval]:
    """Every decision ever recorded, newest first, with who and on which run."""
    return Approval.objects.select_related("user", "gate__run__release__system").order_by(
        "-created_at", "-id"
    )


def comparable_runs(*, dataset_id: int | None, limit: int = 200) -> QuerySet[Run]:
    """Finished runs on a dataset (all finished runs without one), newest first."""
    query = Run.objects.filter(status=Run.Status.SUCCEEDED).select_related("release__system")
    if dataset_id is not None:
        query = query.filter(dataset_id=dataset_id)
    return query.order_by("-created_at", "-id")[:limit]


COMPARISON_CACHE_S = 3600


def runs_compare(*, baseline: Run, candidate: Run) -> Comparison:
    """The paired comparison of two finished runs, computed once and then cached.

    A finished run's verdicts never change, so the key (both ids, both finishing
    times and the confidence) names one result for good.
    """
    def stamp(run: Run) -> str:
        return "-" if run.finished_at is None else f"{run.finished_at.timestamp():.6f}"

    # No spaces in the key: memcached, a likely production cache, refuses them.
    key = (
        f"oloproof:compare:{baseline.pk}:{candidate.pk}:{stamp(baseline)}:"
        f"{stamp(candidate)}:{candidate.confidence}"
    )
    comparison = cache.get(key)
    if comparison is None:
        comparison = compare_runs(
            comparison_result_load(run=baseline),
            comparison_result_load(run=candidate),
            confidence=candidate.confidence,
        )
        cache.set(key, comparison, COMPARISON_CACHE_S)
    return comparison


def comparison_result_load(*, run: Run) -> Result:
    """The parts of a run a paired comparison reads: metrics and each case's verdict values.

    Inputs, outputs and feedback are left out, so comparing two large runs reads
    three narrow columns per verdict instead of whole cases.
    """
    metrics = [
        EngineMetricEstimate(
            metric=row.metric,
            estimate=row.estimate,
            interval=Interval(row.lower, row.upper),
            n_observed=row.n_observed,
            n_missing=row.n_missing,
            method=row.method,
            confidence=row.confidence,
            value_type=row.value_type,
            score_range=(float(row.score_range[0]), float(row.score_range[1]))
            if len(row.score_range) == 2
            else (0.0, 1.0),
            criterion=row.criterion,
        )
        for row in run_metric_estimates(run_id=run.pk)
    ]
    cases = {
        case_id: EngineCaseResult(id=case_id, input={}, expected=None)
        for case_id in _column_rows(
            f"SELECT case_id FROM {CaseResult._meta.db_table} WHERE run_id = %s "
            "ORDER BY position, id",
            [run.pk],
        )
    }
    if run.dataset_id is not None:
        for case_id, cluster in _rows(
            f"SELECT case_id, cluster FROM {DatasetCase._meta.db_table} "
            "WHERE dataset_id = %s AND cluster IS NOT NULL",
            [run.dataset_id],
        ):
            case = cases.get(case_id)
            if case is not None:
                case.cluster = cluster
    has_sub_scores = any(metric.is_sub_score for metric in metrics)
    scores_column = ", scores" if has_sub_scores else ""
    missing = Verdict.failed_to_judge("missing")
    for row in _rows(
        f"SELECT case_id, criterion, value{scores_column} FROM {CaseVerdict._meta.db_table} "
        "WHERE run_id = %s",
        [run.pk],
    ):
        case = cases.get(row[0])
        if case is None:
            continue
        if row[2] is None:
            case.verdicts[row[1]] = missing
            continue
        scores = _json_object(row[3]) if has_sub_scores else {}
        case.verdicts[row[1]] = Verdict(value=float(row[2]), scores=scores)
    system = run.release.system.name if run.release is not None else "unnamed"
    version = run.release.version if run.release is not None else ""
    return Result(
        metrics=metrics,
        cases=list(cases.values()),
        provenance={"system": {"name": system, "version": version}},
        run_id=str(run.pk),
    )


def _rows(sql: str, params: list[Any]) -> Iterator[tuple[Any, ...]]:
    """Rows of a narrow read, fetched in blocks; the ORM's per-row cost is what is skipped."""
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        while block := cursor.fetchmany(10_000):
            yield from block


def _column_rows(sql: str, params: list[Any]) -> Iterator[Any]:
    for row in _rows(sql, params):
        yield row[0]


def _json_object(value: Any) -> dict[str, float]:
    if isinstance(value, str):
        value = json.loads(value)
    return value if isinstance(value, dict) else {}


def recorded_configs(*, limit: int = 20) -> list[Run]:
    """Recent runs submitted with a full config, one per distinct config, newest first."""
    seen: set[str] = set()
    picked: list[Run] = []
    query = (
        Run.objects.filter(config__has_key="evaluators")
        .select_related("release__system")
        .order_by("-created_at", "-id")
    )
    for run in query[: limit * 5]:
        key = repr(sorted(run.config.items()))
        if key not in seen:
            seen.add(key)
            picked.append(run)
        if len(picked) == limit:
            break
    return picked
