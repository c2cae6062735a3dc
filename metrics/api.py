"""The metrics API: a run's metric estimates and verdicts, and the evaluators known."""

from __future__ import annotations

from typing import Any

from django.apps import apps
from django.http import HttpRequest
from ninja import Router
from ninja.errors import HttpError

from metrics.models import CaseVerdict, Evaluator
from metrics.schemas import EvaluatorOut, MetricOut, VerdictPage
from metrics.selectors import run_metric_estimates

router = Router(tags=["metrics"])

MAX_LIMIT = 500


def _require_run(run_id: int) -> None:
    # The metrics app reads runs by name, not by import, to keep its dependencies one-way.
    if not apps.get_model("runs", "Run").objects.filter(pk=run_id).exists():
        raise HttpError(404, f"no run with id {run_id}")


@router.get("/runs/{run_id}/metrics", response=list[MetricOut], summary="A run's metrics")
def run_metrics(request: HttpRequest, run_id: int) -> Any:
    _require_run(run_id)
    return list(run_metric_estimates(run_id=run_id).select_related("evaluator"))


@router.get(
    "/runs/{run_id}/verdicts", response=VerdictPage, summary="A run's verdicts on one criterion"
)
def run_verdicts(
    request: HttpRequest, run_id: int, criterion: str, limit: int = 100, offset: int = 0
) -> dict[str, Any]:
    if not 1 <= limit <= MAX_LIMIT or offset < 0:
        raise HttpError(400, f"limit must be 1..{MAX_LIMIT} and offset 0 or more")
    _require_run(run_id)
    verdicts = CaseVerdict.objects.filter(run_id=run_id, criterion=criterion).order_by("case_id")
    return {
        "count": verdicts.count(),
        "limit": limit,
        "offset": offset,
        "items": list(verdicts[offset : offset + limit]),
    }


@router.get("/evaluators", response=list[EvaluatorOut], summary="Evaluators seen, by criterion")
def evaluators(request: HttpRequest, criterion: str | None = None) -> Any:
    query = Evaluator.objects.all()
    if criterion:
        query = query.filter(criterion=criterion)
    return list(query[:MAX_LIMIT])
