"""Reads from the runs app: runs with their filters, cases, baselines, results."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.db.models import QuerySet

from metrics._batches import KEY_BATCH, batches
from metrics.models import CaseVerdict
from metrics.selectors import run_metric_estimates
from oloproof_core.result import Result
from oloproof_core.result_io import result_from_dict
from runs.errors import NotFoundError
from runs.models import Approval, CaseResult, DatasetCase, Run


@dataclass(frozen=True, slots=True)
class RunFilters:
    system: str | None = None
    release: str | None = None
    dataset_digest: str | None = None
    status: str | None = None
    gate_outcome: str | None = None
    created_after: datetime | None = None
    created_before: datetime | None = None


def runs_list(*, filters: RunFilters | None = None) -> QuerySet[Run]:
    """Runs newest first, with release, system, dataset and gate joined in the same query."""
    query = Run.objects.select_related("release__system", "dataset", "gate", "created_by")
    if filters is None:
        return query
    if filters.system:
        query = query.filter(release__system__name=filters.system)
    if filters.release is not None:
        query = query.filter(release__version=filters.release)
    if filters.dataset_digest:
        # A prefix is enough, as with git commits.
        query = query.filter(dataset__digest__startswith=filters.dataset_digest)
    if filters.status:
        query = query.filter(status=filters.status)
    if filters.gate_outcome == "none":
        query = query.filter(gate__isnull=True)
    elif filters.gate_outcome:
        query = query.filter(gate__outcome=filters.gate_outcome)
    if filters.created_after is not None:
        query = query.filter(created_at__gte=filters.created_after)
    if filters.created_before is not None:
        query = query.filter(created_at__lt=filters.created_before)
    return query


def run_get(*, run_id: int) -> Run:
    run = runs_list().filter(pk=run_id).first()
    if run is None:
        raise NotFoundError(f"no run with id {run_id}")
    return run


def run_cases(*, run: Run, outcome: str | None = None) -> QuerySet[CaseResult]:
    query = CaseResult.objects.filter(run=run).order_by("position", "id")
    if outcome == "error":
        return query.exclude(error_type="")
    if outcome:
        return query.filter(outcome=outcome)
    return query


def dataset_cases_by_id(*, run: Run, case_ids: list[str]) -> dict[str, DatasetCase]:
    """The dataset rows (input, expected) behind some cases of a run."""
    if run.dataset_id is None or not case_ids:
        return {}
    rows = DatasetCase.objects.filter(dataset_id=run.dataset_id, case_id__in=case_ids)
    return {row.case_id: row for row in rows}


def run_approvals(*, run: Run) -> QuerySet[Approval]:
    return Approval.objects.filter(gate__run=run).select_related("user").order_by("created_at")


def baseline_run_find(*, system_name: str, release: str | None = None) -> Run | None:
    """The run a new one is compared with.

    With `release`, the latest successful run of that release (system at version);
    without, the run of this system most recently approved at its gate.
    """
    finished = Run.objects.filter(status=Run.Status.SUCCEEDED, release__system__name=system_name)
    if release is not None:
        return finished.filter(release__version=release).order_by("-created_at", "-id").first()
    approved = (
        Approval.objects.filter(
            gate__run__release__system__name=system_name,
            gate__run__status=Run.Status.SUCCEEDED,
            decision=Approval.Decision.APPROVE,
        )
        .select_related("gate__run")
        .order_by("-created_at", "-id")
        .first()
    )
    return None if approved is None else approved.gate.run


def run_result_load(*, run: Run, batch_size: int = 2000) -> Result:
    """Rebuild the engine's Result of a recorded run (metrics, cases with verdicts, gate).

    Cases are read in batches, with one query for their verdicts and one for their
    dataset rows per batch.
    """
    data: dict[str, Any] = {
        "run_id": str(run.pk),
        "provenance": run.provenance,
        "metrics": [_metric_dict(estimate) for estimate in run_metric_estimates(run_id=run.pk)],
        "cases": list(_case_dicts(run, batch_size)),
    }
    gate = getattr(run, "gate", None)
    if gate is not None:
        data["gate"] = {"outcome": gate.outcome, "summary": gate.summary, "rules": gate.rules}
    return result_from_dict(data)


def _metric_dict(estimate: Any) -> dict[str, Any]:
    return {
        "metric": estimate.metric,
        "criterion": estimate.criterion,
        "estimate": estimate.estimate,
        "interval": {"lower": estimate.lower, "upper": estimate.upper},
        "n_observed": estimate.n_observed,
        "n_missing": estimate.n_missing,
        "method": estimate.method,
        "confidence": estimate.confidence,
        "value_type": estimate.value_type,
        "score_range": estimate.score_range,
    }


def _case_dicts(run: Run, batch_size: int) -> Iterator[dict[str, Any]]:
    cases = CaseResult.objects.filter(run=run).order_by("position", "id")
    for batch in batches(cases.iterator(chunk_size=batch_size), batch_size):
        ids = [case.case_id for case in batch]
        rows: dict[str, DatasetCase] = {}
        verdicts: dict[str, dict[str, Any]] = {}
        for id_batch in batches(ids, KEY_BATCH):
            rows.update(dataset_cases_by_id(run=run, case_ids=id_batch))
            for verdict in CaseVerdict.objects.filter(run=run, case_id__in=id_batch):
                verdicts.setdefault(verdict.case_id, {})[verdict.criterion] = {
                    "value": verdict.value,
                    "feedback": verdict.feedback,
                    "scores": verdict.scores,
                    "error": verdict.error,
                    "traceback": verdict.error_traceback,
                    "cached": verdict.cached,
                }
        for case in batch:
            row = rows.get(case.case_id)
            yield {
                "id": case.case_id,
                "input": row.input if row is not None else {},
                "expected": row.expected if row is not None else None,
                "split": row.split if row is not None else None,
                "cluster": row.cluster if row is not None else None,
                "output": case.output,
                "error": case.error_dict(),
                "latency_ms": case.latency_ms,
                "artifacts": case.artifacts,
                "verdicts": verdicts.get(case.case_id, {}),
            }
