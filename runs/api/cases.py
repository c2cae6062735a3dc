"""The case API: annotations (read, write), a case's transcript, and a run's cases exported
as CSV or JSONL.

Thin: routes read through selectors and write through runs.writers.annotations, which checks
the runner role; domain errors become clear 4xx responses (`evalsite.api`).
"""

from __future__ import annotations

from typing import Any, Literal

from django.http import HttpRequest, StreamingHttpResponse
from ninja import Query, Router, Schema
from ninja.pagination import paginate
from ninja.responses import Status

from runs.api.paging import Paging
from runs.api.schemas import AnnotationChangeOut, AnnotationIn, AnnotationOut, TranscriptOut
from runs.errors import NotFoundError
from runs.selectors.annotations import case_annotations, run_annotations
from runs.selectors.cases import CaseFilters
from runs.selectors.exports import run_cases_export
from runs.selectors.runs import run_get
from runs.selectors.transcripts import case_transcript_data
from runs.writers.annotations import AnnotationValues, case_annotation_save

router = Router(tags=["cases"])

SearchField = Literal["input", "expected", "output", "error", "case_id"]
AnnotationFilter = Literal[
    "annotated", "disagree", "rated_pass", "rated_fail", "scored", "commented", "unannotated"
]
"""SEARCH_FIELDS and ANNOTATION_FILTERS spelled out for the schema (a test keeps them equal)."""


class CaseTableQuery(Schema):
    criterion: str | None = None
    outcome: Literal["passed", "failed", "missing"] | None = None
    q: str | None = None
    search_in: SearchField | None = None
    annotation: AnnotationFilter | None = None

    def filters(self) -> CaseFilters:
        return CaseFilters(
            criterion=self.criterion,
            outcome=self.outcome,
            search=self.q,
            search_in=self.search_in,
            annotation=self.annotation,
        )


@router.get(
    "/runs/{run_id}/annotations",
    response=list[AnnotationOut],
    summary="People's annotations of a run's cases (one case with `case_id`)",
)
@paginate(Paging, default_limit=100)
def list_annotations(request: HttpRequest, run_id: int, case_id: str | None = None) -> Any:
    if case_id is not None:
        return case_annotations(user=request.user, run_id=run_id, case_id=case_id).annotations
    run = run_get(user=request.user, run_id=run_id)
    return run_annotations(run=run).order_by("case_id", "created_at", "id")


@router.get(
    "/runs/{run_id}/annotations/changes",
    response=list[AnnotationChangeOut],
    summary="Every change to one case's annotations, oldest first (the audit trail)",
)
def list_annotation_changes(request: HttpRequest, run_id: int, case_id: str) -> Any:
    return case_annotations(user=request.user, run_id=run_id, case_id=case_id).changes


@router.post(
    "/runs/{run_id}/annotations",
    response={200: AnnotationOut},
    summary="Set your rating, score and comment on one case (runner role); never a verdict",
)
def annotate(request: HttpRequest, run_id: int, payload: AnnotationIn) -> Status[Any]:
    annotation = case_annotation_save(
        user=request.user,
        run=run_get(user=request.user, run_id=run_id),
        case_id=payload.case_id,
        values=AnnotationValues(
            rating=payload.rating or "", score=payload.score, comment=payload.comment
        ),
    )
    return Status(200, annotation)


@router.get(
    "/runs/{run_id}/export",
    summary="A run's cases (the case table's filters) as CSV or JSON Lines, streamed",
    response={200: None},
)
def export_cases(
    request: HttpRequest,
    run_id: int,
    query: Query[CaseTableQuery],
    format: Literal["csv", "jsonl"] = "jsonl",
) -> StreamingHttpResponse:
    export = run_cases_export(
        user=request.user, run_id=run_id, filters=query.filters(), export_format=format
    )
    response = StreamingHttpResponse(export.lines, content_type=export.content_type)
    response["Content-Disposition"] = f'attachment; filename="{export.filename}"'
    return response


@router.get(
    "/runs/{run_id}/transcript",
    response=TranscriptOut,
    url_name="case_transcript",
    summary="One case's transcript: every model call and step of the system, in order",
)
def get_transcript(request: HttpRequest, run_id: int, case_id: str) -> dict[str, Any]:
    run = run_get(user=request.user, run_id=run_id)
    transcript = case_transcript_data(run=run, case_id=case_id)
    if transcript is None:
        raise NotFoundError(
            f"case {case_id!r} of run {run_id} has no transcript: its system made no model "
            "call through the gateway and reported no step of its own"
        )
    return {"case_id": case_id, **transcript}
