"""Planning a queued run on a worker: load its code and dataset, then cut it into chunks.

Moving the run from queued to running is a conditional update in the transaction
that creates its chunks, so two workers planning the same run plan it once.
"""

from __future__ import annotations

from django.db import transaction

from runs.models import Run
from runs.workers.chunks import chunks_create
from runs.workers.dispatch import Enqueue, chunk_size, send_work_on_commit
from runs.workers.run_code import RunCodeError, run_dataset_load, run_plan_load
from runs.workers.sequential_runs import sequential_batch, sequential_start
from runs.writers.dataset_recording import dataset_record
from runs.writers.recording import release_get_or_create, run_fail, run_started


def run_start(*, run_id: int) -> str:
    """Plan a queued run: load its code and dataset, record the dataset, create its chunks."""
    run = Run.objects.select_related("project").filter(pk=run_id).first()
    if run is None or run.status != Run.Status.QUEUED:
        return "skipped"
    try:
        plan, config = run_plan_load(run=run)
        dataset = run.dataset or dataset_record(run_dataset_load(run=run, config=config))
    except RunCodeError as exc:
        run_fail(run_id=run_id, reason=str(exc))
        return "failed"
    release = release_get_or_create(
        project=run.project, system_name=plan.release.name, version=plan.release.version
    )
    batch, cases = sequential_batch(plan), dataset.n_cases // plan.repeats
    sequential = None
    if batch is not None:
        sequential = sequential_start(horizon=cases, batch=batch, repeats=plan.repeats)
    # A sequential run starts with its first batch (runs.workers.sequential_runs), each of
    # its cases as many rows as it has repeats.
    total = dataset.n_cases if batch is None else min(batch, cases) * plan.repeats
    with transaction.atomic():
        started = run_started(
            run_id=run_id, release=release, dataset=dataset, sequential=sequential, total=total
        )
        if not started:
            return "skipped"
        chunk_ids = chunks_create(run_id=run_id, total=total, size=chunk_size())
        send_work_on_commit(Enqueue(chunks=chunk_ids))
    return "started"
