"""Celery tasks: thin, take ids, and call the work modules, where the work is made idempotent.

Tasks are acknowledged late and rejected when their worker is lost, so a message
whose worker died is delivered again; the claims in `runs.chunks` make the
second delivery harmless, and the periodic sweep covers messages a broker lost.
"""

from __future__ import annotations

from typing import Any

from celery import shared_task
from celery.signals import worker_ready, worker_shutdown
from django.conf import settings
from django.db import DatabaseError

from runs import chunks, finalising, optimization_work, planning, sweep
from runs.dispatch import CHUNK_TASK, FINALISE_TASK, OPTIMIZATION_TASK, RUN_START_TASK, SWEEP_TASK

_TASK_OPTIONS: dict[str, Any] = {"acks_late": True, "reject_on_worker_lost": True}


@shared_task(name=RUN_START_TASK, **_TASK_OPTIONS)
def run_execute(run_id: int) -> str:
    """Plan a queued run into chunks and send them to the workers."""
    return planning.run_start(run_id=run_id)


@shared_task(
    name=CHUNK_TASK,
    autoretry_for=(DatabaseError,),
    retry_backoff=True,
    max_retries=5,
    **_TASK_OPTIONS,
)
def run_chunk_execute(chunk_id: int) -> str:
    """Execute one chunk of a run's cases, if no live worker holds it."""
    return chunks.chunk_execute(chunk_id=chunk_id)


@shared_task(name=FINALISE_TASK, **_TASK_OPTIONS)
def run_finalise(run_id: int) -> str:
    """Aggregate a run whose chunks are all done; the first finaliser wins."""
    return finalising.run_finalise(run_id=run_id)


@shared_task(name=OPTIMIZATION_TASK, **_TASK_OPTIONS)
def optimization_execute(optimization_id: int) -> str:
    """Run or resume a submitted optimization, if no live worker holds it."""
    return optimization_work.optimization_execute(optimization_id=optimization_id)


@shared_task(name=SWEEP_TASK, **_TASK_OPTIONS)
def runs_sweep() -> dict[str, int]:
    report = sweep.work_sweep()
    return {name: getattr(report, name) for name in report.__slots__}


_sweeper: sweep.SweepThread | None = None


@worker_ready.connect
def _start_sweeping(**_: Any) -> None:
    """Every worker sweeps for lost work: at start (picking up what a dead one left) and
    every OLOPROOF_SWEEP_INTERVAL seconds."""
    global _sweeper
    if _sweeper is None:
        _sweeper = sweep.SweepThread(float(settings.OLOPROOF_SWEEP_INTERVAL))
        _sweeper.start()


@worker_shutdown.connect
def _stop_sweeping(**_: Any) -> None:
    if _sweeper is not None:
        _sweeper.stop()
