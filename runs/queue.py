"""Handing a queued run to the Celery workers."""

from __future__ import annotations


def enqueue_run(run_id: int) -> None:
    """Send the run's id (never the model instance) to the workers."""
    from runs.tasks import run_execute

    run_execute.delay(run_id)


def enqueue_chunk(chunk_id: int) -> None:
    from runs.tasks import run_chunk_execute

    run_chunk_execute.delay(chunk_id)


def enqueue_finalise(run_id: int) -> None:
    from runs.tasks import run_finalise

    run_finalise.delay(run_id)
