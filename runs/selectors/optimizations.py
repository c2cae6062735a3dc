"""Reads of optimizations: the list, one optimization, its candidates, and its ledger."""

from __future__ import annotations

import difflib
from collections.abc import Mapping
from typing import Any

from django.db.models import QuerySet

import oloproof_core.optimize as optimize
from runs.access import LOCAL, Actor, optimizations_visible
from runs.errors import NotFoundError
from runs.models import (
    Optimization,
    OptimizationCandidate,
    OptimizationEvaluation,
    OptimizationReflection,
)


def optimizations_list(*, user: Actor) -> QuerySet[Optimization]:
    return optimizations_visible(user=user).order_by("-created_at", "-id")


def optimization_get(*, user: Actor, optimization_id: int) -> Optimization:
    found = optimizations_visible(user=user).filter(pk=optimization_id).first()
    if found is None:
        raise NotFoundError(f"optimization {optimization_id} does not exist")
    return found


def optimization_state(*, optimization_id: int) -> dict[str, Any]:
    found = optimization_get(user=LOCAL, optimization_id=optimization_id)
    return {"status": found.status, **dict(found.progress or {})}


def evaluations_list(*, optimization_id: int) -> list[optimize.EvaluationRecord]:
    rows = OptimizationEvaluation.objects.filter(optimization_id=optimization_id).order_by("pk")
    return [
        optimize.EvaluationRecord(
            candidate=row.candidate_digest, case_id=row.case_id, split=row.split, data=row.data
        )
        for row in rows.iterator()
    ]


def reflections_list(*, optimization_id: int) -> list[optimize.ReflectionRecord]:
    rows = OptimizationReflection.objects.filter(optimization_id=optimization_id).order_by("pk")
    return [
        optimize.ReflectionRecord(
            prompt_digest=row.prompt_digest,
            occurrence=row.occurrence,
            component=row.component,
            prompt=row.prompt,
            reply=row.reply,
            cost_usd=row.cost_usd,
        )
        for row in rows
    ]


def candidate_records(*, optimization_id: int) -> list[optimize.CandidateRecord]:
    return [
        optimize.CandidateRecord.from_dict(candidate_dict(row))
        for row in candidates_list(optimization_id=optimization_id)
    ]


def candidates_list(*, optimization_id: int) -> list[OptimizationCandidate]:
    return list(
        OptimizationCandidate.objects.filter(optimization_id=optimization_id).order_by("index")
    )


def candidate_dict(row: OptimizationCandidate) -> dict[str, Any]:
    """A recorded candidate as plain data: the ledger's record, the API's and the page's."""
    return {
        "index": row.index,
        "digest": row.digest,
        "version": row.version,
        "texts": row.texts,
        "parents": row.parents,
        "origin": row.origin,
        "val": row.val,
        "cost_usd": row.cost_usd,
        "latency_ms": row.latency_ms,
        "reflection": row.reflection,
        "val_run_id": None if row.val_run_id is None else str(row.val_run_id),
        "budget_used": row.budget_used,
    }


def texts_diff(
    before: Mapping[str, str], after: Mapping[str, str], *, before_name: str
) -> list[dict[str, Any]]:
    """Each component whose text changed, as unified diff lines (the whole text as context,
    so a reader sees the change in place)."""
    return [
        {
            "component": name,
            "lines": list(
                difflib.unified_diff(
                    str(before.get(name, "")).splitlines(),
                    str(text).splitlines(),
                    fromfile=f"{name} ({before_name})",
                    tofile=name,
                    lineterm="",
                    n=max(len(str(text).splitlines()), len(str(before.get(name, "")).splitlines())),
                )
            ),
        }
        for name, text in after.items()
        if before.get(name) != text
    ]


def candidate_diffs(*, candidates: list[OptimizationCandidate]) -> dict[int, list[dict[str, Any]]]:
    """Each candidate's texts against its first parent's, as unified diff lines per component."""
    by_index = {row.index: row for row in candidates}
    diffs: dict[int, list[dict[str, Any]]] = {}
    for row in candidates:
        parent = by_index.get(row.parents[0]) if row.parents else None
        if parent is not None:  # the seed has none: its texts are shown as they are
            diffs[row.index] = texts_diff(parent.texts, row.texts, before_name="parent")
    return diffs


def seed_winner_diff(
    *, candidates: list[OptimizationCandidate], winner: int | None
) -> list[dict[str, Any]]:
    """Every component of the winner: its diff from the seed's text, or none if unchanged."""
    by_index = {row.index: row for row in candidates}
    seed, best = by_index.get(0), by_index.get(winner) if winner is not None else None
    if seed is None or best is None:
        return []
    changed = {
        item["component"]: item["lines"]
        for item in texts_diff(seed.texts, best.texts, before_name="seed")
    }
    return [
        {"component": name, "lines": changed.get(name, []), "text": text}
        for name, text in best.texts.items()
    ]


def optimization_winner(*, user: Actor, optimization_id: int) -> dict[str, Any]:
    """The winning texts, as a file to paste into the system's components: the winner once
    the optimization has one, never a candidate of a search still going."""
    optimization = optimization_get(user=user, optimization_id=optimization_id)
    winner = (
        None
        if optimization.winner_index is None
        else OptimizationCandidate.objects.filter(
            optimization=optimization, index=optimization.winner_index
        ).first()
    )
    if winner is None:
        raise NotFoundError(
            f"optimization {optimization_id} has no winner yet (it is {optimization.status})"
        )
    seed = OptimizationCandidate.objects.filter(optimization=optimization, index=0).first()
    return {
        "optimization": optimization.pk,
        "system": optimization.system_name,
        "release": winner.version,
        "seed_release": seed.version if seed is not None else None,
        "candidate": winner.index,
        "val": dict(winner.val),
        "components": dict(winner.texts),
    }


def optimization_summary(*, optimization: Optimization) -> dict[str, Any]:
    """What the API returns for one optimization (candidates included)."""
    candidates = candidates_list(optimization_id=optimization.pk)
    return {
        "id": optimization.pk,
        "status": optimization.status,
        "engine": optimization.engine,
        "system": optimization.system_name,
        "config": optimization.config,
        "progress": optimization.progress,
        "outcome": optimization.outcome,
        "error": optimization.error,
        "winner_index": optimization.winner_index,
        "created_at": optimization.created_at,
        "finished_at": optimization.finished_at,
        "candidates": [candidate_dict(row) for row in candidates],
    }
