"""Executing a submitted optimization on a worker: claim it, keep it alive, resume it.

The claim is a conditional update (queued, or running with a stale heartbeat), so
one worker works on an optimization at a time; a heartbeat thread keeps
`touched_at` fresh. A worker killed mid-search leaves its heartbeat to go stale;
the sweep sends the optimization again, and the next worker resumes it from the
ledger: recorded evaluations and reflections are replayed, not redone.
"""

from __future__ import annotations

import logging
import os
import threading
import traceback
from datetime import datetime

from django.db import close_old_connections
from django.utils import timezone

import oloproof_core.optimize as optimize
from runs.dispatch import Enqueue, send_work, stale_after, worker_name
from runs.models import Optimization
from runs.optimization_ledger import DjangoLedger
from runs.optimization_records import (
    optimization_claim,
    optimization_fail,
    optimization_name_record,
    optimization_touch,
)
from runs.store import DjangoStore
from runs.user_code import forget_changed_project_code, remember_project_code

logger = logging.getLogger(__name__)


class Heartbeat:
    """Touches the claim every third of the stale interval until stopped."""

    def __init__(self, optimization_id: int, worker: str) -> None:
        self.optimization_id, self.worker = optimization_id, worker
        self._stop = threading.Event()
        self._thread = threading.Thread(
            target=self._loop, daemon=True, name=f"optimization-{optimization_id}-heartbeat"
        )

    def __enter__(self) -> Heartbeat:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(5)

    def _loop(self) -> None:
        interval = max(0.2, stale_after().total_seconds() / 3)
        while not self._stop.wait(interval):
            try:
                optimization_touch(optimization_id=self.optimization_id, worker=self.worker)
            except Exception:
                logger.exception("heartbeat of optimization %s failed", self.optimization_id)
            finally:
                close_old_connections()


def optimization_execute(*, optimization_id: int) -> str:
    """Run (or resume) a submitted optimization to its end, if no live worker holds it."""
    worker = worker_name()
    stale_before = timezone.now() - stale_after()
    if not optimization_claim(
        optimization_id=optimization_id, worker=worker, stale_before=stale_before
    ):
        return "skipped"
    record = Optimization.objects.get(pk=optimization_id)
    config = dict(record.config)
    base_dir = str(config.pop("base_dir", "") or os.getcwd())
    try:
        forget_changed_project_code(base_dir)
        spec = optimize.optimize_spec_from_mapping(
            config, base_dir=base_dir, label=f"optimization {optimization_id} config"
        )
        remember_project_code(base_dir)
        optimization_name_record(
            optimization_id=optimization_id,
            system_name=optimize.artifact_from(
                spec.system, components=spec.components, name=spec.name
            ).name,
        )
        with Heartbeat(optimization_id, worker):
            optimize.run_optimization(
                spec=spec,
                store=DjangoStore(created_by=record.created_by),
                ledger=DjangoLedger(created_by=record.created_by),
                optimization_id=str(optimization_id),
            )
    except Exception as exc:
        where = traceback.format_exception_only(exc)[-1].strip()
        optimization_fail(
            optimization_id=optimization_id,
            reason=f"worker {worker}: optimization {optimization_id} failed: {where}",
        )
        return "failed"
    return "succeeded"


def optimizations_sweep(*, now: datetime | None = None) -> int:
    """Send again optimizations whose worker died (stale heartbeat) or whose message was lost."""
    cutoff = (now or timezone.now()) - stale_after()
    lost = list(
        Optimization.objects.filter(
            status__in=[Optimization.Status.RUNNING, Optimization.Status.PROVING],
            touched_at__lt=cutoff,
        ).values_list("pk", flat=True)
    )
    lost += list(
        Optimization.objects.filter(
            status=Optimization.Status.QUEUED, created_at__lt=cutoff
        ).values_list("pk", flat=True)
    )
    send_work(Enqueue(optimizations=lost))
    return len(lost)
