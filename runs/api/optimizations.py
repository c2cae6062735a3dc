"""The optimizations API: submit one, list them, read one with its candidates.

Thin, like the runs API: a selector reads, a service writes and checks permissions.
"""

from datetime import datetime
from typing import Any

from django.http import HttpRequest, HttpResponse
from ninja import Field, Router, Schema
from ninja.pagination import paginate
from ninja.responses import Status

import oloproof_core.optimize as optimize
from runs.access.requests import AuthenticatedRequest
from runs.api.paging import Paging
from runs.selectors.optimization_export import (
    FORMATS,
    winner_document,
    winner_filename,
    winner_format,
)
from runs.selectors.optimizations import (
    optimization_get,
    optimization_summary,
    optimization_winner,
    optimizations_list,
)
from runs.services import optimization_submit_by

router = Router(tags=["optimizations"])


class OptimizationSubmitIn(Schema):
    config: dict[str, Any] = Field(
        ...,
        description="the keys of an optimization config (optimize.yaml): "
        + "; ".join(
            f"{item.name}{'' if item.required else ' (optional)'}: {item.meaning}"
            for item in optimize.OPTIMIZE_CONFIG_FIELDS
        ),
    )
    base_dir: str = Field(
        ...,
        description="absolute folder on the workers that relative paths resolve from; it "
        "must lie inside a registered code root of the project",
    )
    project: str | None = Field(
        None, description="the project's slug; may be left out by a runner of only one project"
    )


class OptimizationOut(Schema):
    id: int
    status: str
    engine: str
    system_name: str
    winner_index: int | None
    progress: dict[str, Any]
    error: str
    created_at: datetime
    finished_at: datetime | None


class CandidateOut(Schema):
    index: int
    digest: str
    version: str
    texts: dict[str, str]
    parents: list[int]
    origin: str
    val: dict[str, Any]
    cost_usd: float | None
    latency_ms: float | None
    reflection: dict[str, Any] | None
    val_run_id: str | None
    budget_used: dict[str, Any] | None = Field(
        None, description="the optimization's budget used when the candidate was recorded"
    )


class OptimizationDetailOut(Schema):
    id: int
    status: str
    engine: str
    system: str
    config: dict[str, Any]
    progress: dict[str, Any]
    outcome: dict[str, Any]
    error: str
    winner_index: int | None
    created_at: datetime
    finished_at: datetime | None
    candidates: list[CandidateOut]


@router.post("/optimizations", response={201: OptimizationOut}, summary="Submit an optimization")
def submit_optimization(
    request: AuthenticatedRequest, payload: OptimizationSubmitIn
) -> Status[Any]:
    record = optimization_submit_by(
        user=request.user,
        config=payload.config,
        base_dir=payload.base_dir,
        project=payload.project,
    )
    return Status(201, optimization_get(user=request.user, optimization_id=record.pk))


@router.get("/optimizations", response=list[OptimizationOut], summary="Optimizations, newest first")
@paginate(Paging, default_limit=50)
def list_optimizations(request: HttpRequest) -> Any:
    return optimizations_list(user=request.user)


@router.get(
    "/optimizations/{optimization_id}",
    response=OptimizationDetailOut,
    summary="One optimization: progress, budget used, candidates, the proof on test",
)
def get_optimization(request: HttpRequest, optimization_id: int) -> dict[str, Any]:
    record = optimization_get(user=request.user, optimization_id=optimization_id)
    return optimization_summary(optimization=record)


class WinnerOut(Schema):
    optimization: int
    system: str
    release: str = Field(..., description="the winner's release version")
    seed_release: str | None
    candidate: int
    val: dict[str, Any] = Field(..., description="the winner's figures on val")
    components: dict[str, str] = Field(
        ..., description="the winning texts, as @system(components=...) or a config takes them"
    )


@router.get(
    "/optimizations/{optimization_id}/winner",
    response=WinnerOut,
    summary="The winning component texts (format=yaml for a YAML file)",
)
def get_optimization_winner(
    request: HttpRequest, optimization_id: int, format: str = "json"
) -> Any:
    chosen = winner_format(format)
    winner = optimization_winner(user=request.user, optimization_id=optimization_id)
    if chosen == "json":
        return winner
    response = HttpResponse(
        winner_document(winner, format=chosen), content_type=f"{FORMATS[chosen]}; charset=utf-8"
    )
    response["Content-Disposition"] = (
        f'attachment; filename="{winner_filename(winner, format=chosen)}"'
    )
    return response
