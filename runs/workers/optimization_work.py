"""Executing a submitted optimization on a worker: claim it, keep it alive, resume it.

The claim is a conditional update (queued, or running with a stale heartbeat), so
one worker works on an optimization at a time; a heartbeat thread keeps
`touched_at` fresh. A worker killed mid-search leaves its heartbeat to go stale;
the sweep sends the optimization again, and the next worker resumes it from the
ledger: recorded evaluations and reflections are replayed, not redone.

Only a submitted optimization (its config carries the folder it was submitted from)
is ever taken by a worker. One that a process ran itself (`optimize()`, `oloproof
optimize` without --submit) names no files a worker could load; when that process
stops without ending it, the sweep marks it failed and says why.
"""

from __future__ import annotations

import logging
import os
from datetime import datetime

from django.utils import timezone

import oloproof_core.optimize as optimize
from oloproof_core import OloproofError
from runs.models import Optimization
from runs.store import DjangoStore
from runs.workers.dispatch import Enqueue, send_work, stale_after, worker_name
from runs.workers.optimization_heartbeat import Heartbeat
from runs.workers.optimization_ledger import DjangoLedger
from runs.workers.user_code import forget_changed_project_code, remember_project_code
from runs.writers.optimization_records import (
    SUBMITTED,
    optimization_claim,
    optimization_fail,
    optimization_name_record,
)

logger = logging.getLogger(__name__)


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
            config,
            base_dir=base_dir,
            label=f"optimization {optimization_id} config",
            # A runner's DSPy program would run in this worker's process: the operator's call.
            dspy_here=os.environ.get("OLOPROOF_DSPY_IN_PROCESS") == "allow",
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
        if isinstance(exc, OloproofError):
            what = str(exc)
        else:
            logger.exception("optimization %s failed", optimization_id)
            what = f"{type(exc).__name__}: {exc}"
        optimization_fail(
            optimization_id=optimization_id,
            reason=f"worker {worker}: optimization {optimization_id} failed: {what}",
        )
        return "failed"
    return "succeeded"


def optimizations_sweep(*, now: datetime | None = None) -> int:
    """Send again optimizations whose worker died (stale heartbeat) or whose message was
    lost; fail those whose own process stopped without ending them."""
    cutoff = (now or timezone.now()) - stale_after()
    stale = Optimization.objects.filter(
        status__in=[Optimization.Status.RUNNING, Optimization.Status.PROVING],
        touched_at__lt=cutoff,
    )
    seconds = int(stale_after().total_seconds())
    for pk, process in stale.exclude(SUBMITTED).values_list("pk", "claimed_by"):
        optimization_fail(
            optimization_id=pk,
            reason=(
                f"the process that ran optimization {pk} ({process or 'unknown'}) stopped "
                f"before it ended: its heartbeat is older than {seconds} s. "
                "An optimization run by optimize() or by `oloproof optimize` without "
                "--submit is not taken over by workers: run it again, or submit it "
                "(`oloproof optimize optimize.yaml --submit`) to have workers resume it."
            ),
        )
    lost = list(stale.filter(SUBMITTED).values_list("pk", flat=True))
    lost += list(
        Optimization.objects.filter(
            status=Optimization.Status.QUEUED, created_at__lt=cutoff
        ).values_list("pk", flat=True)
    )
    send_work(Enqueue(optimizations=lost))
    return len(lost)
