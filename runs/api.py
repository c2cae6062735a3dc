"""The runs API: list, detail, cases, submit, compare, gate and approvals.

Thin: each route reads through a selector or writes through a service; domain
errors become clear 4xx responses in `evalsite.api`.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from django.http import HttpRequest
from ninja import Query, Router, Schema
from ninja.errors import HttpError
from ninja.responses import Status

from metrics.selectors import case_verdicts_by_case
from oloproof_core.compare import compare_runs
from runs.auth import AuthenticatedRequest
from runs.errors import NotFoundError
from runs.models import Gate
from runs.schemas import (
    ApprovalIn,
    ApprovalOut,
    CasePage,
    ComparisonOut,
    GateOut,
    RunDetailOut,
    RunOut,
    RunPage,
    RunSubmitIn,
)
from runs.selectors import (
    RunFilters,
    dataset_cases_by_id,
    run_cases,
    run_get,
    run_result_load,
    runs_list,
)
from runs.services import approval_create, run_submit

router = Router(tags=["runs"])

MAX_LIMIT = 500


class RunListQuery(Schema):
    system: str | None = None
    release: str | None = None
    dataset: str | None = None
    status: Literal["queued", "running", "finalising", "succeeded", "failed"] | None = None
    gate: Literal["pass", "fail", "inconclusive", "none"] | None = None
    created_after: datetime | None = None
    created_before: datetime | None = None
    limit: int = 50
    offset: int = 0


class CaseListQuery(Schema):
    outcome: Literal["passed", "failed", "missing", "pending", "error"] | None = None
    limit: int = 100
    offset: int = 0


def _page_bounds(limit: int, offset: int) -> tuple[int, int]:
    if not 1 <= limit <= MAX_LIMIT:
        raise HttpError(400, f"limit must be between 1 and {MAX_LIMIT}, got {limit}")
    if offset < 0:
        raise HttpError(400, f"offset must be 0 or more, got {offset}")
    return limit, offset


@router.get("/runs", response=RunPage, summary="List runs, newest first")
def list_runs(request: HttpRequest, query: Query[RunListQuery]) -> dict[str, Any]:
    limit, offset = _page_bounds(query.limit, query.offset)
    runs = runs_list(
        filters=RunFilters(
            system=query.system,
            release=query.release,
            dataset_digest=query.dataset,
            status=query.status,
            gate_outcome=query.gate,
            created_after=query.created_after,
            created_before=query.created_before,
        )
    )
    return {
        "count": runs.count(),
        "limit": limit,
        "offset": offset,
        "items": list(runs[offset : offset + limit]),
    }


@router.post("/runs", response={201: RunOut}, summary="Submit a run to the workers")
def submit_run(request: AuthenticatedRequest, payload: RunSubmitIn) -> Status[Any]:
    if not request.user.has_perm("runs.add_run"):
        raise HttpError(403, "submitting a run needs the runs.add_run permission")
    run = run_submit(config=payload.config, base_dir=payload.base_dir, created_by=request.user)
    return Status(201, run_get(run_id=run.pk))


@router.get("/runs/{run_id}", response=RunDetailOut, summary="One run with its provenance")
def get_run(request: HttpRequest, run_id: int) -> Any:
    return run_get(run_id=run_id)


@router.get("/runs/{run_id}/cases", response=CasePage, summary="A run's cases, in order")
def list_cases(request: HttpRequest, run_id: int, query: Query[CaseListQuery]) -> dict[str, Any]:
    limit, offset = _page_bounds(query.limit, query.offset)
    run = run_get(run_id=run_id)
    cases = run_cases(run=run, outcome=query.outcome)
    page = list(cases[offset : offset + limit])
    ids = [case.case_id for case in page]
    rows = dataset_cases_by_id(run=run, case_ids=ids)
    verdicts = case_verdicts_by_case(run_id=run.pk, case_ids=ids)
    items = []
    for case in page:
        row = rows.get(case.case_id)
        items.append(
            {
                "case_id": case.case_id,
                "position": case.position,
                "input": None if row is None else row.input,
                "expected": None if row is None else row.expected,
                "output": case.output,
                "error": case.error_dict(),
                "latency_ms": case.latency_ms,
                "cost_usd": case.cost_usd,
                "artifacts": case.artifacts,
                "outcome": case.outcome,
                "verdicts": verdicts.get(case.case_id, []),
            }
        )
    return {"count": cases.count(), "limit": limit, "offset": offset, "items": items}


@router.get(
    "/compare",
    response=ComparisonOut,
    summary="Compare two runs on the same cases (paired by case id)",
)
def compare(request: HttpRequest, baseline: int, candidate: int) -> dict[str, Any]:
    baseline_run = run_get(run_id=baseline)
    candidate_run = run_get(run_id=candidate)
    comparison = compare_runs(
        run_result_load(run=baseline_run),
        run_result_load(run=candidate_run),
        confidence=candidate_run.confidence,
    )
    return {"baseline_run": baseline, "candidate_run": candidate, **comparison.to_dict()}


def _gate_of(run_id: int) -> Gate:
    run = run_get(run_id=run_id)
    gate = getattr(run, "gate", None)
    if gate is None:
        raise NotFoundError(f"run {run_id} has no gate: it was evaluated without a policy")
    return gate


@router.get("/runs/{run_id}/gate", response=GateOut, summary="A run's gate and its approvals")
def get_gate(request: HttpRequest, run_id: int) -> Gate:
    return _gate_of(run_id)


@router.post(
    "/runs/{run_id}/approvals",
    response={201: ApprovalOut},
    summary="Approve or reject a run's gate (needs runs.approve_gate)",
)
def approve(request: HttpRequest, run_id: int, payload: ApprovalIn) -> Status[Any]:
    run = run_get(run_id=run_id)
    approval = approval_create(
        run=run,
        user=request.user,
        decision=payload.decision,
        comment=payload.comment,
        override=payload.override,
    )
    return Status(201, approval)
