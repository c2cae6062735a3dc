"""Celery tasks: thin, take ids, and call the work modules, where the work is made idempotent.

Tasks are acknowledged late and rejected when their worker is lost, so a message
whose worker died is delivered again; the claims in `runs.workers.chunks` make the
second delivery harmless, and the periodic sweep covers messages a broker lost.
"""

from __future__ import annotations

import random
from typing import Any

from celery import shared_task
from celery.signals import worker_ready, worker_shutdown
from django.conf import settings
from django.db import DatabaseError

from runs.workers import chunks, finalising, optimization_work, planning, sweep
from runs.workers.dispatch import (
    CHUNK_TASK,
    FINALISE_TASK,
    OPTIMIZATION_TASK,
    RUN_START_TASK,
    SWEEP_TASK,
)
from runs.workers.worker_start import FIRST_WAIT_S, MAX_WAIT_S

_TASK_OPTIONS: dict[str, Any] = {"acks_late": True, "reject_on_worker_lost": True}


@shared_task(name=RUN_START_TASK, **_TASK_OPTIONS)
def run_execute(run_id: int) -> str:
    """Plan a queued run into chunks and send them to the workers."""
    return planning.run_start(run_id=run_id)


CHUNK_RETRIES = 8
"""Retries of a chunk whose database failed, about one to two minutes of them (a server
restarting); after them the sweep sends the chunk again."""


def chunk_retry_countdown(retries: int) -> float:
    """Seconds before the next try of a chunk that has been retried `retries` times.

    The worker's start waits (1, 2, 4 ... up to 30 s), each drawn in its upper half:
    the workers that lost the database together come back spread out, and no wait is
    0 s (Celery's full jitter drew 0 s often, so a retry met the same outage at once).
    """
    ceiling = min(FIRST_WAIT_S * 2**retries, MAX_WAIT_S)
    return round(random.uniform(ceiling / 2, ceiling), 1)


@shared_task(name=CHUNK_TASK, bind=True, max_retries=CHUNK_RETRIES, **_TASK_OPTIONS)
def run_chunk_execute(self: Any, chunk_id: int) -> str:
    """Execute one chunk of a run's cases, if no live worker holds it."""
    try:
        return chunks.chunk_execute(chunk_id=chunk_id)
    except DatabaseError as exc:
        # Likely passing (a restarted server, a lock timeout); Celery's retry line
        # ("Retry in 3.7s") shows this countdown.
        countdown = chunk_retry_countdown(self.request.retries)
        raise self.retry(exc=exc, countdown=countdown) from exc


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
