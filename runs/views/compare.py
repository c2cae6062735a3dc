"""Two runs on the same dataset side by side: paired differences, the case grid, its export."""

from __future__ import annotations

from typing import Any

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse, StreamingHttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_GET

from metrics.charts import comparison_chart
from runs.errors import InvalidRequestError
from runs.forms import CompareForm
from runs.selectors.comparison import comparable_runs
from runs.selectors.comparison_cases import (
    CaseView,
    ComparedCasePages,
    comparison_cases,
    comparison_export_lines,
)
from runs.views._common import get_run_or_404, page_of, query_without_page

GRID_PAGE_SIZE = 50
GRID_FILTERS = (
    ("all", "All"),
    ("changed", "Changed"),
    ("regressed", "Regressed"),
    ("improved", "Improved"),
    ("missing", "Missing on either side"),
    ("output_changed", "Output differs"),
)
GRID_ORDERS = (
    ("case", "the runs' order"),
    ("change", "change: largest drop first"),
    ("-change", "change: largest gain first"),
)
EXPORT_TYPES = {"csv": "text/csv; charset=utf-8", "jsonl": "application/x-ndjson; charset=utf-8"}


def case_view(request: HttpRequest) -> CaseView:
    """The grid's filter, metric, order and multiplicity rule from the query string."""
    return CaseView(
        show=request.GET.get("show") or "all",
        metric=request.GET.get("metric") or None,
        order=request.GET.get("order") or "case",
        fdr=request.GET.get("fdr") != "none",
    )


@login_required
@require_GET
def compare_page(request: HttpRequest) -> HttpResponse:
    form = CompareForm(request.GET or None)
    context: dict[str, Any] = {
        "form": form,
        "grid_filters": GRID_FILTERS,
        "grid_orders": GRID_ORDERS,
    }
    if not form.is_valid():
        context["choices"] = list(comparable_runs(user=request.user, dataset_id=None))
        return render(request, "runs/compare.html", context)
    baseline = get_run_or_404(request, form.cleaned_data["baseline"])
    candidate = get_run_or_404(request, form.cleaned_data["candidate"])
    view = case_view(request)
    context.update(
        baseline=baseline,
        candidate=candidate,
        view=view,
        choices=list(comparable_runs(user=request.user, dataset_id=candidate.dataset_id)),
    )
    try:
        changes = comparison_cases(
            user=request.user, baseline=baseline, candidate=candidate, view=view
        )
    except InvalidRequestError as exc:
        context["problem"] = str(exc)
        return render(request, "runs/compare.html", context, status=400)
    pages = ComparedCasePages(changes=changes, baseline=baseline, candidate=candidate)
    comparison = changes.comparison
    context.update(
        comparison=comparison,
        explained=[(item, item.pair_counts().sentences()) for item in comparison.metrics],
        counts=changes.counts(),
        page=page_of(request, pages, per_page=GRID_PAGE_SIZE),
        query=query_without_page(request),
        chart=_chart(comparison),
    )
    return render(request, "runs/compare.html", context)


_charts: dict[int, tuple[Any, str]] = {}
"""Recent comparisons' charts by the comparison's identity (kept alive beside it).

Paging through the grid shows one comparison many times, and building the Plotly
figure costs more than the rest of the page; `runs_compare` hands back the same
object while the comparison is recent."""


def _chart(comparison: Any) -> str:
    if not comparison.metrics:
        return ""
    kept = _charts.get(id(comparison))
    if kept is not None and kept[0] is comparison:
        return kept[1]
    if len(_charts) >= 4:
        _charts.pop(next(iter(_charts)))
    chart = comparison_chart(comparison)
    _charts[id(comparison)] = (comparison, chart)
    return chart


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
