"""One pair's figures and its case grid, for the compare page and the side-by-side page."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any
from urllib.parse import urlencode

from django.http import HttpRequest

from metrics.charts import comparison_chart
from runs.models import Run
from runs.selectors.comparison_cases import CaseView, ComparedCasePages, comparison_cases
from runs.views._common import page_of, query_without_page

GRID_PAGE_SIZE = 50
FOLD_PAST = 2
"""More metrics than this share one grid column unless the reader unfolds them."""
GRID_FILTERS = (
    ("all", "All"),
    ("changed", "Changed"),
    ("regressed", "Regressed"),
    ("improved", "Improved"),
    ("missing", "Missing on either side"),
    ("output_changed", "Output differs"),
)
REPEAT_GRID_FILTERS = (
    ("all", "Every case"),
    ("regressed", "Regressed beyond noise"),
    ("improved", "Improved beyond noise"),
    ("flaky", "Flaky"),
)
"""The cases by their status against their own noise, when the runs repeated them."""
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
        cases=request.GET.get("cases") or "all",
    )


def grid_context(
    request: HttpRequest, *, baseline: Run, candidate: Run, runs: Sequence[Run] = ()
) -> dict[str, Any]:
    """One pair's figures and its case grid (this page's and the side-by-side page's).

    `runs`: the runs of a side-by-side page, kept in the grid's links and forms."""
    view = case_view(request)
    changes = comparison_cases(user=request.user, baseline=baseline, candidate=candidate, view=view)
    pages = ComparedCasePages(changes=changes, baseline=baseline, candidate=candidate)
    comparison = changes.comparison
    pair_fields = [("runs", run.pk) for run in runs]
    pair_fields += [("baseline", baseline.pk), ("candidate", candidate.pk)]
    return {
        "grid_filters": GRID_FILTERS,
        "grid_orders": GRID_ORDERS,
        "view": view,
        "grid_baseline": baseline,
        "grid_candidate": candidate,
        "pair_fields": pair_fields,
        "pair_query": urlencode(pair_fields),
        "metric_columns": _metric_columns(request, comparison),
        "comparison": comparison,
        "explained": [(item, item.pair_counts().sentences()) for item in comparison.metrics],
        "counts": changes.counts(),
        "repeat_filters": REPEAT_GRID_FILTERS,
        "repeat_counts": changes.repeat_counts(),
        "repeat_cases": changes.repeat_cases,
        "page": page_of(request, pages, per_page=GRID_PAGE_SIZE),
        "query": query_without_page(request),
        "chart": _chart(comparison),
    }


def _metric_columns(request: HttpRequest, comparison: Any) -> bool:
    """Whether the grid gives each metric a column of its own (`?columns=`): by default
    up to two metrics do, more are folded into one column so the texts stay readable."""
    asked = request.GET.get("columns")
    if asked in ("each", "one"):
        return asked == "each"
    return len(comparison.metrics) <= FOLD_PAST


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
