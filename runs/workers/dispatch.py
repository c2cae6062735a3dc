"""Handing work to the Celery workers, by task name, once the writing transaction commits.

Tasks are looked up in the Celery app's registry by name rather than imported: the
task modules call the work modules, so the work modules must not import them back.
The message carries ids only, never model instances. The app itself is loaded on the
first hand-over, by the name in `settings.OLOPROOF_CELERY_APP`: Celery and the task
modules cost about 0.1 s, which every command that never hands work over (a local
`oloproof run`) used to pay when Django set up.
"""

from __future__ import annotations

import os
import socket
from dataclasses import dataclass, field
from datetime import timedelta
from functools import cache
from typing import TYPE_CHECKING

from django.conf import settings
from django.db import transaction
from django.utils.module_loading import import_string

if TYPE_CHECKING:
    from celery import Celery

RUN_START_TASK = "runs.run_execute"
CHUNK_TASK = "runs.run_chunk_execute"
FINALISE_TASK = "runs.run_finalise"
SWEEP_TASK = "runs.runs_sweep"
OPTIMIZATION_TASK = "runs.optimization_execute"


def chunk_size() -> int:
    return max(1, int(settings.OLOPROOF_CHUNK_SIZE))


def stale_after() -> timedelta:
    return timedelta(seconds=max(1, int(settings.OLOPROOF_CHUNK_STALE_AFTER)))


def worker_name() -> str:
    return f"{socket.gethostname()}:{os.getpid()}"


@dataclass(slots=True)
class Enqueue:
    """Work a step hands on to the workers once its transaction has committed."""

    chunks: list[int] = field(default_factory=list)
    finalise: list[int] = field(default_factory=list)
    start: list[int] = field(default_factory=list)
    optimizations: list[int] = field(default_factory=list)

    def __bool__(self) -> bool:
        return bool(self.chunks or self.finalise or self.start or self.optimizations)


@cache
def celery_app() -> Celery:
    """The Celery app, loaded once, with the apps' task modules registered."""
    app: Celery = import_string(settings.OLOPROOF_CELERY_APP)
    # Fires the app's autodiscovery: each installed app's `tasks` module is imported.
    app.loader.import_default_modules()
    return app


def _send(task_name: str, record_id: int) -> None:
    celery_app().tasks[task_name].delay(record_id)


def send_work(work: Enqueue) -> None:
    for chunk_id in work.chunks:
        _send(CHUNK_TASK, chunk_id)
    for run_id in work.finalise:
        _send(FINALISE_TASK, run_id)
    for run_id in work.start:
        _send(RUN_START_TASK, run_id)
    for optimization_id in work.optimizations:
        _send(OPTIMIZATION_TASK, optimization_id)


def send_work_on_commit(work: Enqueue) -> None:
    if work:
        transaction.on_commit(lambda: send_work(work))
