"""What the optimization page reads: its candidates with their diffs, the seed → winner
diff, the figures (scores, score over budget, lineage, frontiers) and what names it."""

from __future__ import annotations

from typing import Any

from metrics.optimization_charts import budget_chart, candidate_scores_chart, frontier_chart
from metrics.optimization_lineage import lineage_chart
from runs.models import Optimization, OptimizationCandidate
from runs.selectors.optimizations import (
    candidate_dict,
    candidate_diffs,
    candidates_list,
    seed_winner_diff,
)


def optimization_readouts(*, optimization: Optimization) -> dict[str, Any]:
    """The page's context; the part that follows a running search is drawn from it alone."""
    candidates = candidates_list(optimization_id=optimization.pk)
    plain = [candidate_dict(row) for row in candidates]
    diffs = candidate_diffs(candidates=candidates)
    outcome, progress = optimization.outcome or {}, optimization.progress or {}
    used = progress.get("budget_used") or outcome.get("budget_used") or {}
    context: dict[str, Any] = {
        "optimization": optimization,
        "names": _names(optimization, candidates),
        "candidates": [{**item, "diff": diffs.get(item["index"], [])} for item in plain],
        "proof": outcome.get("proof") or {},
        "progress": progress,
        "budget": (optimization.config or {}).get("budget") or {},
        "used": used,
        "winner_run": optimization.winner_test_run,
        "seed_to_winner": seed_winner_diff(candidates=candidates, winner=optimization.winner_index),
        "live_version": ":".join(
            str(part)
            for part in (
                optimization.status,
                len(plain),
                used.get("metric_calls"),
                optimization.winner_index,
            )
        ),
    }
    if plain:
        context["figures"] = _figures(plain, winner=optimization.winner_index)
    return context


def _figures(plain: list[dict[str, Any]], *, winner: int | None) -> dict[str, str]:
    return {
        "scores": candidate_scores_chart(plain, winner=winner),
        "lineage": lineage_chart(plain, winner=winner),
        "budget_calls": budget_chart(plain, measure="metric_calls"),
        "budget_usd": budget_chart(plain, measure="usd"),
        "cost": frontier_chart(plain, measure="cost_usd", title="cost on val (USD)"),
        "latency": frontier_chart(plain, measure="latency_ms", title="mean latency (ms)"),
    }


def _names(optimization: Optimization, candidates: list[OptimizationCandidate]) -> dict[str, Any]:
    """The system and the release the search started from; a record made before the
    engine named them falls back on the seed's val run."""
    named = (optimization.progress or {}).get("system") or {}
    seed = next((row for row in candidates if row.index == 0), None)
    system, release = named.get("name") or optimization.system_name, named.get("version")
    release_row = seed.val_run.release if seed is not None and seed.val_run else None
    if release_row is not None:
        system = system or release_row.system.name
    if release is None and seed is not None:
        release = seed.version.rsplit("+opt", 1)[0]
    return {"system": system, "release": release, "seed": seed.version if seed else None}
