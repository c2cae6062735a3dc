"""The sweep: hands work lost to dead workers or an emptied broker back to the workers.

Every worker runs it at start and every `OLOPROOF_SWEEP_INTERVAL` seconds; it only
re-sends messages, and the claims in `runs.workers.chunks` make every resend harmless.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime

from django.db import DatabaseError, close_old_connections
from django.utils import timezone

from runs.models import Run, RunChunk
from runs.workers.chunks import chunks_reclaim_stale, chunks_touch_pending
from runs.workers.dispatch import Enqueue, send_work, stale_after
from runs.workers.optimization_work import optimizations_sweep
from runs.workers.worker_start import failure_reason

logger = logging.getLogger(__name__)


@dataclass(slots=True)
class SweepReport:
    reclaimed: int = 0
    resent: int = 0
    finalising: int = 0
    restarted: int = 0
    optimizations: int = 0


def runs_sweep(*, now: datetime | None = None) -> SweepReport:
    """Hand lost work to the workers again; safe to run anywhere, any number of times.

    - a claimed chunk whose heartbeat is stale (its worker died) goes back to pending
      and is sent again;
    - a running run none of whose chunks moved within the stale interval has lost its
      messages (a broker restarted empty): its pending chunks are sent again;
    - a running run whose chunks were all done a stale interval ago is sent to be
      finalised (its own finalising task was lost);
    - a queued run older than the stale interval is sent to be planned again.
    Each resend is harmless if the original message still arrives: claims are atomic.
    """
    now = now or timezone.now()
    cutoff = now - stale_after()
    report = SweepReport()
    work = Enqueue()
    running = RunChunk.objects.filter(run__status=Run.Status.RUNNING)
    # Decided before any reset below, which would make a stalled run look active.
    active_runs = set(running.filter(touched_at__gte=cutoff).values_list("run_id", flat=True))
    stale = running.filter(status=RunChunk.Status.CLAIMED, touched_at__lt=cutoff)
    reclaimed = chunks_reclaim_stale(
        chunk_ids=list(stale.values_list("pk", flat=True)), cutoff=cutoff, now=now
    )
    work.chunks.extend(reclaimed)
    report.reclaimed = len(reclaimed)
    stalled = running.filter(status=RunChunk.Status.PENDING, touched_at__lt=cutoff).exclude(
        run_id__in=active_runs
    )
    stalled_ids = list(stalled.values_list("pk", flat=True))
    if stalled_ids:
        chunks_touch_pending(chunk_ids=stalled_ids, now=now)
        work.chunks.extend(stalled_ids)
        report.resent += len(stalled_ids)
    unfinished = RunChunk.objects.exclude(status=RunChunk.Status.DONE).values("run_id")
    # A run whose last chunk just finished has its finalising task on the way already.
    just_finished = RunChunk.objects.filter(finished_at__gte=cutoff).values("run_id")
    complete = (
        Run.objects.filter(status=Run.Status.RUNNING, chunks__isnull=False)
        .exclude(pk__in=unfinished)
        .exclude(pk__in=just_finished)
        .distinct()
    )
    work.finalise.extend(complete.values_list("pk", flat=True))
    report.finalising = len(work.finalise)
    queued = Run.objects.filter(status=Run.Status.QUEUED, created_at__lt=cutoff)
    work.start.extend(queued.values_list("pk", flat=True))
    report.restarted = len(work.start)
    send_work(work)
    return report


def work_sweep(*, now: datetime | None = None) -> SweepReport:
    """The runs' sweep, then the optimizations': one whose heartbeat went stale (its
    worker died) or that is still queued after the stale interval is sent again."""
    report = runs_sweep(now=now)
    report.optimizations = optimizations_sweep(now=now)
    return report


class SweepThread:
    """Runs `runs_sweep` every `interval` seconds in a worker's main process."""

    def __init__(self, interval: float, sweep: Callable[[], object] = work_sweep) -> None:
        self.interval = interval
        self.sweep = sweep
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="runs-sweep", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()

    def _loop(self) -> None:
        # The first sweep runs at once: a worker that starts picks up what others left.
        while True:
            try:
                self.sweep()
            except DatabaseError as exc:
                # The database is away (restarting, unreachable): one line, not a traceback
                # every interval; the chunks' own retries and this loop resume once it is back.
                logger.warning(
                    "sweeping for lost run work: cannot reach the database (%s); trying again "
                    "in %g s",
                    failure_reason(exc),
                    self.interval,
                )
            except Exception:
                logger.exception("sweeping for lost run work failed; trying again later")
            finally:
                close_old_connections()
            if self._stop.wait(self.interval):
                return
