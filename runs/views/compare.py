"""Two runs on the same dataset side by side, with paired differences."""

from __future__ import annotations

from typing import Any

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_GET

from metrics.charts import comparison_chart
from oloproof_core.errors import OloproofError
from runs.dashboard_selectors import comparable_runs, runs_compare
from runs.forms import CompareForm
from runs.models import Run
from runs.views._common import get_run_or_404

CASES_LISTED = 100
"""Regressed and improved cases listed per metric; the count is always shown in full."""


@login_required
@require_GET
def compare_page(request: HttpRequest) -> HttpResponse:
    form = CompareForm(request.GET or None)
    context: dict[str, Any] = {"form": form, "cases_listed": CASES_LISTED}
    if not form.is_valid():
        context["choices"] = list(comparable_runs(dataset_id=None))
        return render(request, "runs/compare.html", context)
    baseline = get_run_or_404(form.cleaned_data["baseline"])
    candidate = get_run_or_404(form.cleaned_data["candidate"])
    context.update(
        baseline=baseline,
        candidate=candidate,
        choices=list(comparable_runs(dataset_id=candidate.dataset_id)),
    )
    problem = _incomparable(baseline, candidate)
    if problem:
        context["problem"] = problem
        return render(request, "runs/compare.html", context, status=400)
    try:
        comparison = runs_compare(baseline=baseline, candidate=candidate)
    except OloproofError as exc:
        context["problem"] = str(exc)
        return render(request, "runs/compare.html", context, status=400)
    context.update(
        comparison=comparison,
        chart=comparison_chart(comparison) if comparison.metrics else "",
    )
    return render(request, "runs/compare.html", context)


def _incomparable(baseline: Run, candidate: Run) -> str:
    if baseline.pk == candidate.pk:
        return "pick two different runs"
    if not (baseline.is_finished and candidate.is_finished):
        return "both runs must have finished"
    if baseline.dataset_id != candidate.dataset_id:
        return (
            "the runs were evaluated on different datasets; a paired comparison "
            "needs the same cases"
        )
    return ""
