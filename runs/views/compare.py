"""Two runs on the same dataset side by side, with paired differences."""

from __future__ import annotations

from typing import Any
from urllib.parse import quote

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.urls import reverse
from django.views.decorators.http import require_GET

from metrics.charts import comparison_chart
from runs.errors import InvalidRequestError
from runs.forms import CompareForm
from runs.models import Run
from runs.selectors.comparison import comparable_runs, runs_compare
from runs.views._common import get_run_or_404

CASES_LISTED = 60
"""Regressed and improved cases listed per metric; the count is always shown in full."""
_PATH_SAFE = "/~:@!$&'()*+,;="
"""What `reverse` leaves unquoted in a path, so these links match the resolver's own."""


@login_required
@require_GET
def compare_page(request: HttpRequest) -> HttpResponse:
    form = CompareForm(request.GET or None)
    context: dict[str, Any] = {"form": form, "cases_listed": CASES_LISTED}
    if not form.is_valid():
        context["choices"] = list(comparable_runs(user=request.user, dataset_id=None))
        return render(request, "runs/compare.html", context)
    baseline = get_run_or_404(request, form.cleaned_data["baseline"])
    candidate = get_run_or_404(request, form.cleaned_data["candidate"])
    context.update(
        baseline=baseline,
        candidate=candidate,
        choices=list(comparable_runs(user=request.user, dataset_id=candidate.dataset_id)),
    )
    try:
        comparison = runs_compare(baseline=baseline, candidate=candidate)
    except InvalidRequestError as exc:
        context["problem"] = str(exc)
        return render(request, "runs/compare.html", context, status=400)
    context.update(
        comparison=comparison,
        changes=_changed_cases(comparison, baseline, candidate),
        chart=comparison_chart(comparison) if comparison.metrics else "",
    )
    return render(request, "runs/compare.html", context)


def _changed_cases(comparison: Any, baseline: Run, candidate: Run) -> list[dict[str, Any]]:
    """Per metric, the first regressed and improved cases with links into both runs.

    The links share one prefix per run, so a long list costs no URL resolving per case.
    """
    before = reverse("runs:cases", args=[baseline.pk])
    after = reverse("runs:cases", args=[candidate.pk])

    def links(case_ids: tuple[str, ...]) -> list[tuple[str, str, str]]:
        return [
            (
                case_id,
                before + quote(case_id, safe=_PATH_SAFE),
                after + quote(case_id, safe=_PATH_SAFE),
            )
            for case_id in case_ids[:CASES_LISTED]
        ]

    return [
        {
            "index": index,
            "metric": item.metric,
            "regressed": links(item.regressed),
            "improved": links(item.improved),
            "n_regressed": len(item.regressed),
            "n_improved": len(item.improved),
        }
        for index, item in enumerate(comparison.metrics, start=1)
        if item.regressed or item.improved
    ]
