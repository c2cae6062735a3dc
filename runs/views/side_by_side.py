"""Runs ticked in the history, side by side: each against one baseline, one pair's grid."""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from oloproof_core.results.compare import MAX_RUNS
from runs.errors import InvalidRequestError
from runs.selectors.side_by_side import runs_side_by_side_named, side_by_side_runs
from runs.views._common import domain_errors
from runs.views.compare_grid import grid_context


def _ids(request: HttpRequest, name: str) -> list[int]:
    values = request.GET.getlist(name)[: MAX_RUNS + 1]
    return [int(value) for value in values if value.isascii() and value.isdecimal()]


def side_by_side_page(request: HttpRequest) -> HttpResponse:
    """`?runs=A&runs=B…[&baseline=A][&candidate=B]`: every run against the baseline (chosen,
    else pre-filled); the grid shows the baseline's pair with `candidate` (else the first)."""
    named, chosen = _ids(request, "runs"), _ids(request, "baseline")
    context: dict[str, Any] = {"max_runs": MAX_RUNS}
    with domain_errors():
        context["runs"] = side_by_side_runs(user=request.user, run_ids=named + chosen)
        try:
            compared = runs_side_by_side_named(
                user=request.user,
                run_ids=named,
                baseline_id=chosen[0] if chosen else None,
                fdr=request.GET.get("fdr") != "none",
            )
            wanted = _ids(request, "candidate")
            candidate = next(
                (run for run in compared.candidates if wanted and run.pk == wanted[0]),
                compared.candidates[0],
            )
            context.update(
                compared=compared,
                runs=compared.runs,
                baseline=compared.baseline,
                **grid_context(
                    request, baseline=compared.baseline, candidate=candidate, runs=compared.runs
                ),
            )
        except InvalidRequestError as exc:
            context["problem"] = str(exc)
            return render(request, "runs/compare_runs.html", context, status=400)
    return render(request, "runs/compare_runs.html", context)
