"""The one writer of the optimization tables: optimizations, candidates, evaluations,
reflections. The runs an optimization makes are written by `runs.writers.recording`, as any run."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

from django.contrib.auth.models import User as Account
from django.db.models import F, Q
from django.utils import timezone

import oloproof_core.optimize as optimize
from metrics.batching import batches
from runs.models import (
    Optimization,
    OptimizationCandidate,
    OptimizationEvaluation,
    OptimizationReflection,
    Project,
)

SUBMITTED = Q(config__has_key="base_dir")
"""Optimizations queued for the workers (their config names the folder they came from);
the others were run by a process of their own, and no worker can take them over."""


def optimization_create(
    *,
    project: Project,
    config: Mapping[str, Any],
    status: str = Optimization.Status.QUEUED,
    created_by: Account | None = None,
    claimed_by: str = "",
) -> Optimization:
    """A new optimization: queued for the workers, or running in `claimed_by`'s process."""
    return Optimization.objects.create(
        project=project,
        config=dict(config),
        status=status,
        created_by=created_by,
        engine=str(config.get("engine", "auto")),
        claimed_by=claimed_by,
        touched_at=timezone.now() if claimed_by else None,
        started_at=timezone.now() if claimed_by else None,
    )


def optimization_claim(*, optimization_id: int, worker: str, stale_before: datetime) -> bool:
    """Take a submitted optimization to work on: queued, or running with a stale heartbeat."""
    now = timezone.now()
    takeable = Q(status=Optimization.Status.QUEUED) | Q(
        SUBMITTED,
        status__in=[Optimization.Status.RUNNING, Optimization.Status.PROVING],
        touched_at__lt=stale_before,
    )
    return bool(
        Optimization.objects.filter(takeable, pk=optimization_id).update(
            status=Optimization.Status.RUNNING,
            claimed_by=worker,
            touched_at=now,
            attempts=F("attempts") + 1,
            started_at=now,
        )
    )


def optimization_touch(*, optimization_id: int, worker: str) -> bool:
    """Refresh the heartbeat of our own claim; False if another worker took it over."""
    return bool(
        Optimization.objects.filter(pk=optimization_id, claimed_by=worker).update(
            touched_at=timezone.now()
        )
    )


def optimization_progress_record(
    *, optimization_id: int, status: str, progress: Mapping[str, Any]
) -> None:
    changes: dict[str, Any] = {
        "status": status,
        "progress": dict(progress),
        "touched_at": timezone.now(),
    }
    if progress.get("engine"):
        changes["engine"] = str(progress["engine"])
    # An optimization run by the command or the library is named by its engine's
    # progress, as no worker names it before the search.
    system_name = (progress.get("system") or {}).get("name")
    if system_name:
        changes["system_name"] = str(system_name)[:200]
    Optimization.objects.filter(pk=optimization_id).exclude(
        status__in=[Optimization.Status.SUCCEEDED, Optimization.Status.FAILED]
    ).update(**changes)


def optimization_conclude_record(
    *, optimization_id: int, status: str, outcome: Mapping[str, Any]
) -> None:
    proof = outcome.get("proof") or {}

    def run_of(role: str) -> int | None:
        run_id = (proof.get(role) or {}).get("run_id")
        return int(run_id) if run_id and str(run_id).isdigit() else None

    Optimization.objects.filter(pk=optimization_id).update(
        status=status,
        outcome=dict(outcome),
        winner_index=outcome.get("winner"),
        seed_test_run_id=run_of("seed"),
        winner_test_run_id=run_of("winner"),
        finished_at=timezone.now(),
        error=str(outcome.get("error") or ""),
    )


def optimization_fail(*, optimization_id: int, reason: str) -> None:
    Optimization.objects.filter(pk=optimization_id).exclude(
        status=Optimization.Status.SUCCEEDED
    ).update(status=Optimization.Status.FAILED, error=reason[:20000], finished_at=timezone.now())


def optimization_name_record(*, optimization_id: int, system_name: str) -> None:
    Optimization.objects.filter(pk=optimization_id).update(system_name=system_name[:200])


def evaluations_record(
    *, optimization_id: int, records: Sequence[optimize.EvaluationRecord]
) -> None:
    for batch in batches(list(records), 500):
        OptimizationEvaluation.objects.bulk_create(
            [
                OptimizationEvaluation(
                    optimization_id=optimization_id,
                    candidate_digest=record.candidate,
                    case_id=record.case_id,
                    split=record.split,
                    data=dict(record.data),
                )
                for record in batch
            ],
            ignore_conflicts=True,
        )


def reflection_record(*, optimization_id: int, record: optimize.ReflectionRecord) -> None:
    OptimizationReflection.objects.bulk_create(
        [
            OptimizationReflection(
                optimization_id=optimization_id,
                prompt_digest=record.prompt_digest,
                occurrence=record.occurrence,
                component=record.component,
                prompt=record.prompt,
                reply=record.reply,
                cost_usd=record.cost_usd,
            )
        ],
        ignore_conflicts=True,
    )


def candidate_record(*, optimization_id: int, record: optimize.CandidateRecord) -> None:
    run_id = record.val_run_id
    OptimizationCandidate.objects.bulk_create(
        [
            OptimizationCandidate(
                optimization_id=optimization_id,
                index=record.index,
                digest=record.digest,
                version=record.version,
                texts=dict(record.texts),
                parents=list(record.parents),
                origin=record.origin,
                val=dict(record.val),
                cost_usd=record.cost_usd,
                latency_ms=record.latency_ms,
                reflection=record.reflection,
                val_run_id=int(run_id) if run_id and str(run_id).isdigit() else None,
                budget_used=None if record.budget_used is None else dict(record.budget_used),
            )
        ],
        ignore_conflicts=True,
    )
