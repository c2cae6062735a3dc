"""Handing a queued run to the Celery workers."""

from __future__ import annotations


def enqueue_run(run_id: int) -> None:
    """Send the run's id (never the model instance) to the workers."""
    from runs.tasks import run_execute

    run_execute.delay(run_id)
