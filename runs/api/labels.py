"""The labels API: label a case's metric, list a metric's labels, its calibration and
combined figure, and the review queue's next case.

Thin: routes read through `runs.selectors.labels` and write through `runs.writers.labels`,
which checks the runner role. A value the metric does not take, or a case that cannot
be labelled, answers 422 in the shape of any request the schema refuses
(`{"detail": [{"loc", "msg", "type"}]}`); unknown runs, cases and metrics 404; a
viewer's label 403.
"""

from __future__ import annotations

import math
from datetime import datetime
from typing import Any

from django.http import HttpRequest
from ninja import Field, Router, Schema
from ninja.errors import ValidationError
from ninja.pagination import paginate

from runs.api.paging import Paging
from runs.errors import InvalidRequestError
from runs.selectors.labels import metric_labels, review_queue, run_labels
from runs.writers.labels import MAX_NOTE, save_label

router = Router(tags=["labels"])


class LabelIn(Schema):
    case_id: str = Field(..., min_length=1, max_length=500)
    metric: str = Field(..., min_length=1, max_length=200)
    value: bool | float | str = Field(
        ..., description="on the metric's scale: pass/fail (or 1/0) or a score in its range"
    )
    note: str = Field("", max_length=MAX_NOTE)


class LabelOut(Schema):
    run_id: int
    case_id: str
    metric: str
    value: float
    note: str
    author: str
    created_at: datetime
    updated_at: datetime


class PersonLabelOut(Schema):
    author: str
    value: float
    note: str
    created_at: datetime
    updated_at: datetime


class CaseLabelsOut(Schema):
    case_id: str
    judge_value: float | None
    labels: list[PersonLabelOut]
    mean: float
    people_disagree: bool
    judge_disagrees: bool


def _refused(exc: InvalidRequestError, where: list[str | int]) -> ValidationError:
    """A refusal in the shape of the schema's own 422s, at the field it is about."""
    field = getattr(exc, "field", None)
    return ValidationError(
        [{"type": "value_error", "loc": [*where, *([field] if field else [])], "msg": str(exc)}]
    )


def _width_checked(width: float | None) -> float | None:
    if width is not None and not (math.isfinite(width) and width > 0):
        raise ValidationError(
            [{"type": "value_error", "loc": ["query", "width"], "msg": "width must be above 0"}]
        )
    return width


@router.post(
    "/runs/{run_id}/labels",
    response={200: LabelOut},
    summary="Set your label of one case's metric (runner role): the value you judge right",
)
def label(request: HttpRequest, run_id: int, payload: LabelIn) -> Any:
    try:
        saved = save_label(
            request.user, run_id, payload.case_id, payload.metric, payload.value, payload.note
        )
    except InvalidRequestError as exc:
        raise _refused(exc, ["body", "payload"]) from None
    return {
        "run_id": run_id,
        "case_id": payload.case_id,
        "metric": saved.criterion,
        "value": saved.value,
        "note": saved.note,
        "author": saved.author_name,
        "created_at": saved.created_at,
        "updated_at": saved.updated_at,
    }


@router.get(
    "/runs/{run_id}/labels",
    response=list[CaseLabelsOut],
    summary="The labelled cases of a run's metric, each person's label and disagreements",
)
@paginate(Paging, default_limit=100)
def list_labels(request: HttpRequest, run_id: int, metric: str) -> Any:
    return run_labels(user=request.user, run_id=run_id, criterion=metric)


@router.get(
    "/runs/{run_id}/metrics/{metric}/calibration",
    summary="The judge-only and combined figures, the judge's calibration, people's agreement",
    response={200: dict[str, Any]},
)
def calibration(
    request: HttpRequest, run_id: int, metric: str, width: float | None = None
) -> dict[str, Any]:
    found = metric_labels(user=request.user, run_id=run_id, criterion=metric)
    return found.to_dict(width=_width_checked(width))


@router.get(
    "/runs/{run_id}/review/{metric}/next",
    summary="The review queue's next randomly drawn case no one has labelled",
    response={200: dict[str, Any]},
)
def review_next(
    request: HttpRequest,
    run_id: int,
    metric: str,
    blind: bool = False,
    after: int | None = None,
    width: float | None = None,
) -> dict[str, Any]:
    try:
        queue = review_queue(
            request.user, run_id, metric, blind=blind, width=_width_checked(width), after=after
        )
    except InvalidRequestError as exc:
        raise _refused(exc, ["path", "metric"]) from None
    return queue.to_dict()
