"""The optimizations' pages: the list, and one optimization with its candidates and proof."""

from __future__ import annotations

from typing import Any

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from metrics.optimization_charts import candidate_scores_chart, frontier_chart
from runs.selectors.optimizations import (
    candidate_diffs,
    candidates_list,
    optimization_get,
    optimizations_list,
)
from runs.views._common import call, page_of


@login_required
def optimizations_page(request: HttpRequest) -> HttpResponse:
    page = page_of(request, optimizations_list(user=request.user))
    return render(request, "runs/optimizations.html", {"page": page})


@login_required
def optimization_page(request: HttpRequest, optimization_id: int) -> HttpResponse:
    optimization = call(optimization_get, user=request.user, optimization_id=optimization_id)
    candidates = candidates_list(optimization_id=optimization.pk)
    plain = [_plain(row) for row in candidates]
    diffs = candidate_diffs(candidates=candidates)
    proof = (optimization.outcome or {}).get("proof") or {}
    progress = optimization.progress or {}
    context: dict[str, Any] = {
        "optimization": optimization,
        "candidates": [{**item, "diff": diffs.get(item["index"], [])} for item in plain],
        "proof": proof,
        "progress": progress,
        "budget": (optimization.config or {}).get("budget") or {},
        "used": progress.get("budget_used")
        or (optimization.outcome or {}).get("budget_used")
        or {},
        "winner_run": optimization.winner_test_run,
    }
    if plain:
        context["scores_chart"] = candidate_scores_chart(plain, winner=optimization.winner_index)
        context["cost_chart"] = frontier_chart(
            plain, measure="cost_usd", title="cost on val (USD)", div_id="frontier-cost"
        )
        context["latency_chart"] = frontier_chart(
            plain, measure="latency_ms", title="mean latency (ms)", div_id="frontier-latency"
        )
    return render(request, "runs/optimization.html", context)


def _plain(row: Any) -> dict[str, Any]:
    return {
        "index": row.index,
        "version": row.version,
        "texts": row.texts,
        "parents": row.parents,
        "origin": row.origin,
        "val": row.val,
        "cost_usd": row.cost_usd,
        "latency_ms": row.latency_ms,
        "reflection": row.reflection,
        "val_run_id": row.val_run_id,
    }
