"""The metrics API: a run's metric estimates and verdicts, and the evaluators known."""

from typing import Any

from django.http import HttpRequest
from ninja import Router
from ninja.pagination import paginate

from metrics.schemas import EvaluatorOut, MetricOut, VerdictOut
from metrics.selectors import evaluators_list, run_metric_estimates
from runs.access import runs_visible
from runs.api.paging import MAX_LIMIT, Paging
from runs.selectors.cases import run_verdicts
from runs.selectors.runs import run_get

router = Router(tags=["metrics"])


@router.get("/runs/{run_id}/metrics", response=list[MetricOut], summary="A run's metrics")
def run_metrics(request: HttpRequest, run_id: int) -> Any:
    run = run_get(user=request.user, run_id=run_id)
    return list(run_metric_estimates(run_id=run.pk).select_related("evaluator"))


@router.get(
    "/runs/{run_id}/verdicts",
    response=list[VerdictOut],
    summary="A run's verdicts on one criterion",
)
@paginate(Paging, default_limit=100)
def list_verdicts(request: HttpRequest, run_id: int, criterion: str) -> Any:
    return run_verdicts(run_id=run_get(user=request.user, run_id=run_id).pk, criterion=criterion)


@router.get("/evaluators", response=list[EvaluatorOut], summary="Evaluators seen, by criterion")
def evaluators(request: HttpRequest, criterion: str | None = None) -> Any:
    runs = runs_visible(user=request.user)
    return list(evaluators_list(criterion=criterion, runs=runs)[:MAX_LIMIT])
