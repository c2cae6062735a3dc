"""Two runs on the same dataset side by side: paired differences, the case grid, its export.

Several runs at once (ticked in the history): `runs.views.side_by_side`, which shows
each pair's grid through `runs.views.compare_grid`."""

from __future__ import annotations

from typing import Any

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse, StreamingHttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_GET

from runs.errors import InvalidRequestError
from runs.selectors.comparison import comparable_runs
from runs.selectors.comparison_cases import (
    comparison_export_lines,
)
from runs.views._common import get_run_or_404
from runs.views.compare_grid import EXPORT_TYPES, case_view, grid_context
from runs.views.forms import CompareForm
from runs.views.side_by_side import side_by_side_page


@login_required
@require_GET
def compare_page(request: HttpRequest) -> HttpResponse:
    if "runs" in request.GET:
        # Ticked in the history: several runs, each against one baseline.
        return side_by_side_page(request)
    form = CompareForm(request.GET or None)
    context: dict[str, Any] = {"form": form}
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
        context.update(grid_context(request, baseline=baseline, candidate=candidate))
    except InvalidRequestError as exc:
        context["problem"] = str(exc)
        return render(request, "runs/compare.html", context, status=400)
    return render(request, "runs/compare.html", context)


@login_required
@require_GET
def compare_export(request: HttpRequest) -> HttpResponse | StreamingHttpResponse:
    """The grid's cases (same filter and order) as a CSV or JSONL download, streamed."""
    form = CompareForm(request.GET or None)
    if not form.is_valid():
        return HttpResponse("name a baseline and a candidate run (?baseline=&candidate=)", 400)
    baseline = get_run_or_404(request, form.cleaned_data["baseline"])
    candidate = get_run_or_404(request, form.cleaned_data["candidate"])
    format = request.GET.get("format") or "csv"
    if format not in EXPORT_TYPES:
        return HttpResponse(
            f"format must be csv or jsonl, got {format!r}",
            status=400,
            content_type="text/plain; charset=utf-8",
        )
    try:
        lines = comparison_export_lines(
            user=request.user,
            baseline=baseline,
            candidate=candidate,
            view=case_view(request),
            format=format,
        )
    except InvalidRequestError as exc:
        return HttpResponse(str(exc), status=400, content_type="text/plain; charset=utf-8")
    return export_response(lines, format=format, baseline=baseline.pk, candidate=candidate.pk)


def export_response(
    lines: Any, *, format: str, baseline: int, candidate: int
) -> StreamingHttpResponse:
    """A streamed download named after the two runs (shared with the API's export)."""
    response = StreamingHttpResponse(lines, content_type=EXPORT_TYPES[format])
    name = f"compare-{baseline}-vs-{candidate}.{format}"
    response["Content-Disposition"] = f'attachment; filename="{name}"'
    return response
