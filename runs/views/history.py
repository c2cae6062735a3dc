"""Run history, one run, and the live status of running runs (cases: runs.views.cases)."""

from __future__ import annotations

from typing import Any

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import render
from django.views.decorators.http import require_GET

from metrics.selectors import run_metric_estimates
from runs.access import Role, role_allows, submitted_by_self
from runs.errors import DomainError
from runs.models import Run
from runs.selectors.cases import run_outcome_counts
from runs.selectors.gates import run_approvals, standing_decision
from runs.selectors.keeping import run_keeping
from runs.selectors.runs import (
    LIVE_STATUSES,
    run_filter_choices,
    runs_headline_metrics,
    runs_live_status,
    runs_page_of,
)
from runs.views._common import cursor_of, get_run_or_404, query_without_cursor
from runs.views.forms import ApprovalForm, RunFilterForm
from runs.views.run_readouts import run_page_readouts
from runs.workers.sequential_runs import sequential_continuation, sequential_state

HEADLINE_METRICS = 3
"""Criteria shown per run in the history; the run page shows them all."""


@login_required
@require_GET
def runs_page(request: HttpRequest) -> HttpResponse:
    choices = run_filter_choices(user=request.user)
    form = RunFilterForm(
        request.GET or None,
        systems=choices.systems,
        releases=choices.releases,
        datasets=choices.datasets,
    )
    page = runs_page_of(user=request.user, filters=form.run_filters(), cursor=cursor_of(request))
    headline = runs_headline_metrics(run_ids=[run.pk for run in page.runs])
    rows = [
        {
            "run": run,
            "metrics": headline.get(run.pk, [])[:HEADLINE_METRICS],
            "more_metrics": max(0, len(headline.get(run.pk, [])) - HEADLINE_METRICS),
            "missing": max((m.n_missing for m in headline.get(run.pk, [])), default=0),
            "live": run.status in LIVE_STATUSES,
        }
        for run in page.runs
    ]
    return render(
        request,
        "runs/runs.html",
        {"form": form, "page": page, "rows": rows, "query": query_without_cursor(request)},
    )


@login_required
@require_GET
def runs_status(request: HttpRequest) -> JsonResponse:
    """`?ids=1,2,3` → each run's status and progress (polled by pages with live runs)."""
    ids = [
        int(part)
        for part in request.GET.get("ids", "").split(",")[:200]
        if part.strip().isascii() and part.strip().isdecimal() and len(part.strip()) < 19
    ]
    return JsonResponse({"runs": runs_live_status(user=request.user, run_ids=ids)})


@login_required
@require_GET
def run_page(request: HttpRequest, run_id: int) -> HttpResponse:
    return run_page_render(request, get_run_or_404(request, run_id))


def run_page_render(
    request: HttpRequest,
    run: Run,
    *,
    approval_form: ApprovalForm | None = None,
    status: int = 200,
) -> HttpResponse:
    """The run page; a refused decision re-renders it with the form as it was filled in."""
    estimates = list(run_metric_estimates(run_id=run.pk))
    gate = getattr(run, "gate", None)
    standing = standing_decision(run=run) if gate is not None else None
    may_approve = role_allows(user=request.user, project=run.project, role=Role.APPROVER)
    own_run = submitted_by_self(user=request.user, run=run)  # four eyes
    evaluators = (run.provenance or {}).get("evaluators") or []
    return render(
        request,
        "runs/run.html",
        {
            "run": run,
            "estimates": estimates,
            "gate": gate,
            "approvals": list(run_approvals(run=run)) if gate is not None else [],
            "standing": standing,
            "can_decide": may_approve and not own_run and standing is None,
            "can_revoke": may_approve and not own_run and standing is not None,
            "own_run": may_approve and own_run,
            "approval_form": approval_form or ApprovalForm(),
            "counts": run_outcome_counts(run=run),
            "evaluators": evaluators,
            "live": run.status in LIVE_STATUSES,
            **run_page_readouts(user=request.user, run=run, estimates=estimates),
            "run_more": _run_more(request, run) if gate is not None else {},
            "keeping": run_keeping(user=request.user, run=run),
        },
        status=status,
    )


def _run_more(request: HttpRequest, run: Run) -> dict[str, Any]:
    """Whether the page offers "Run more cases" for a sequential gate, or why not."""
    if run.status != Run.Status.SUCCEEDED or sequential_state(run) is None:
        return {}
    if not role_allows(user=request.user, project=run.project, role=Role.RUNNER):
        return {}
    try:
        state, _ = sequential_continuation(run=run)
    except DomainError as exc:
        return {"blocked": str(exc)} if run.gate.outcome == "inconclusive" else {}
    return {"offer": True, "remaining": int(state["horizon"]) - int(state["n_run"])}
