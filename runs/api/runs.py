"""The runs API: list, detail, name/tag/hide/delete, cases, submit, compare, gate, approvals.

Thin: each route reads through a selector or writes through a service, and the
services check permissions; domain errors become clear 4xx responses (`evalsite.api`).
"""

from datetime import datetime
from typing import Any, Literal

from django.http import HttpRequest
from ninja import Query, Router, Schema
from ninja.pagination import paginate
from ninja.responses import Status

from runs.access.requests import AuthenticatedRequest
from runs.api.cases import CaseTableQuery
from runs.api.paging import CursorPaging, KeysetRows
from runs.api.schemas import (
    ApprovalIn,
    ApprovalOut,
    CaseOut,
    ComparisonOut,
    GateOut,
    RevocationIn,
    RevocationOut,
    RunDetailOut,
    RunKeepIn,
    RunOut,
    RunSubmitIn,
)
from runs.errors import NotFoundError
from runs.models import Gate, Run
from runs.selectors.case_table import CASE_ORDER, case_table_total
from runs.selectors.cases import cases_whole, run_case_table, run_outcome_counts
from runs.selectors.comparison import runs_compare
from runs.selectors.keyset import capped_count
from runs.selectors.runs import RUN_ORDER, RunFilters, run_get, runs_in_order, runs_list
from runs.services import approval_create, approval_revoke, run_continue, run_submit_by
from runs.writers.run_keeping import run_hide, run_remove, run_rename, run_tags_set

router = Router(tags=["runs"])


class RunListQuery(Schema):
    system: str | None = None
    release: str | None = None
    dataset: str | None = None
    status: Literal["queued", "running", "finalising", "succeeded", "failed"] | None = None
    gate: Literal["pass", "fail", "inconclusive", "none"] | None = None
    created_after: datetime | None = None
    created_before: datetime | None = None
    tag: str | None = None
    hidden: bool = False
    """Also list hidden runs (left out by default, as in the dashboard's history)."""


class CaseListQuery(CaseTableQuery):
    """The case table's filters; without a criterion, `outcome` may also be "pending"
    (no result yet) or "error" (the system or an evaluator raised)."""

    outcome: Literal["passed", "failed", "missing", "pending", "error"] | None = None  # type: ignore[assignment]


@router.get("/runs", response=list[RunOut], summary="List runs, newest first")
@paginate(CursorPaging, default_limit=50)
def list_runs(request: HttpRequest, query: Query[RunListQuery]) -> KeysetRows:
    listed = runs_list(
        user=request.user,
        filters=RunFilters(
            system=query.system,
            release=query.release,
            dataset_digest=query.dataset,
            status=query.status,
            gate_outcome=query.gate,
            created_after=query.created_after,
            created_before=query.created_before,
            tag=query.tag,
            hidden=query.hidden,
        ),
    )
    return KeysetRows(
        listed,
        order=RUN_ORDER,
        rows=lambda ids: runs_in_order(user=request.user, run_ids=ids),
        total=lambda: capped_count(listed),
    )


@router.post("/runs", response={201: RunOut}, summary="Submit a run to the workers")
def submit_run(request: AuthenticatedRequest, payload: RunSubmitIn) -> Status[Any]:
    run = run_submit_by(
        user=request.user,
        config=payload.config,
        base_dir=payload.base_dir,
        project=payload.project,
    )
    # The run as queued: a fast worker may already have moved it on.
    return Status(201, run)


@router.post(
    "/runs/{run_id}/continue",
    response={202: RunOut},
    summary="Run more cases of a sequential run whose gate is inconclusive (runner role)",
)
def continue_run(request: HttpRequest, run_id: int) -> Status[Any]:
    return Status(202, run_continue(user=request.user, run_id=run_id))


@router.get("/runs/{run_id}", response=RunDetailOut, summary="One run with its provenance")
def get_run(request: HttpRequest, run_id: int) -> Run:
    return run_get(user=request.user, run_id=run_id)


@router.patch(
    "/runs/{run_id}",
    response=RunOut,
    summary="Name, tag or hide a run (runner role); fields left out stay as they are",
)
def keep_run(request: HttpRequest, run_id: int, payload: RunKeepIn) -> Run:
    if payload.name is not None:
        run_rename(by=request.user, run_id=run_id, name=payload.name)
    if payload.tags is not None:
        run_tags_set(by=request.user, run_id=run_id, tags=payload.tags)
    if payload.hidden is not None:
        run_hide(by=request.user, run_id=run_id, hidden=payload.hidden)
    return run_get(user=request.user, run_id=run_id)


@router.delete(
    "/runs/{run_id}",
    response={204: None},
    summary="Delete a finished run and its rows (runner role; refused, 409, for a run "
    "with an approval decision)",
)
def delete_run(request: HttpRequest, run_id: int) -> Status[Any]:
    run_remove(by=request.user, run_id=run_id)
    return Status(204, None)


@router.get("/runs/{run_id}/cases", response=list[CaseOut], summary="A run's cases, in order")
@paginate(CursorPaging, default_limit=100)
def list_cases(request: HttpRequest, run_id: int, query: Query[CaseListQuery]) -> KeysetRows:
    run = run_get(user=request.user, run_id=run_id)
    filters = query.filters()
    cases = run_case_table(run=run, filters=filters)
    counts = run_outcome_counts(run=run)
    return KeysetRows(
        cases,
        order=CASE_ORDER,
        rows=lambda ids: cases_whole(run=run, case_ids=ids),
        total=lambda: case_table_total(query=cases, filters=filters, counts=counts),
    )


@router.get(
    "/compare",
    response=ComparisonOut,
    summary="Compare two runs on the same cases (paired by case id)",
)
def compare(
    request: HttpRequest, baseline: int, candidate: int, fdr: bool = True
) -> dict[str, Any]:
    comparison = runs_compare(
        baseline=run_get(user=request.user, run_id=baseline),
        candidate=run_get(user=request.user, run_id=candidate),
        fdr=fdr,
    )
    return {"baseline_run": baseline, "candidate_run": candidate, **comparison.to_dict()}


@router.get("/runs/{run_id}/gate", response=GateOut, summary="A run's gate and its approvals")
def get_gate(request: HttpRequest, run_id: int) -> Gate:
    gate = getattr(run_get(user=request.user, run_id=run_id), "gate", None)
    if gate is None:
        raise NotFoundError(f"run {run_id} has no gate: it was evaluated without a policy")
    return gate


@router.post(
    "/runs/{run_id}/approvals",
    response={201: ApprovalOut},
    summary="Approve or reject a run's gate: its one final decision (approver role)",
)
def approve(request: HttpRequest, run_id: int, payload: ApprovalIn) -> Status[Any]:
    approval = approval_create(
        run=run_get(user=request.user, run_id=run_id),
        user=request.user,
        decision=payload.decision,
        comment=payload.comment,
        override=payload.override,
    )
    return Status(201, approval)


@router.post(
    "/runs/{run_id}/revocations",
    response={201: RevocationOut},
    summary="Revoke the standing decision on a run's gate, with a reason (approver role)",
)
def revoke(request: HttpRequest, run_id: int, payload: RevocationIn) -> Status[Any]:
    revocation = approval_revoke(
        run=run_get(user=request.user, run_id=run_id), user=request.user, reason=payload.reason
    )
    return Status(201, revocation)
