"""Finalising a run whose chunks are all done: aggregate, decide the gate, succeed once.

The success is a conditional update from running in the transaction that writes
the metrics and the gate, so a finalising task delivered twice finalises once.
"""

from __future__ import annotations

from typing import Any

from django.utils import timezone

import oloproof_core as engine
from runs.chunks import all_chunks_done
from runs.models import Run, RunChunk
from runs.recording import run_conclusion_record, run_fail
from runs.run_code import RunCodeError, load_failure, run_plan_load
from runs.selectors.results import run_result
from runs.store import DjangoStore


def run_finalise(*, run_id: int) -> str:
    """Aggregate every recorded case, decide the gate and mark the run succeeded, once."""
    run = (
        Run.objects.select_related("dataset", "release__system", "project")
        .filter(pk=run_id)
        .first()
    )
    if run is None or run.status != Run.Status.RUNNING or not all_chunks_done(run_id):
        return "skipped"
    try:
        plan, config = run_plan_load(run=run)
        baseline = engine.load_result(config.baseline) if config.baseline else None
    except Exception as exc:
        reason = str(exc) if isinstance(exc, RunCodeError) else load_failure(run, exc, "")
        run_fail(run_id=run_id, reason=reason)
        return "failed"
    chunks = list(RunChunk.objects.filter(run_id=run_id).only("judging", "claimed_by", "attempts"))
    for chunk in chunks:
        for name, counts in chunk.judging.items():
            plan.tallies.setdefault(name, engine.JudgingTally()).add(engine.JudgingTally(**counts))
    record = run.dataset
    assert record is not None, "a running run has its dataset recorded"
    dataset = engine.Dataset(source=record.source, rows=[], digest=record.digest, split=run.split)
    started_at = run.started_at or run.created_at
    finished_at = timezone.now()
    result = engine.conclude_run(
        plan,
        run_result(run=run).cases,
        dataset,
        DjangoStore(project=run.project.slug),
        started_at=started_at,
        duration_s=(finished_at - started_at).total_seconds(),
        baseline=baseline,
    )
    result.provenance["execution"] = _execution_provenance(chunks, plan)
    succeeded = run_conclusion_record(run=run, result=result, finished_at=finished_at)
    return "succeeded" if succeeded else "skipped"


def _execution_provenance(chunks: list[RunChunk], plan: engine.RunPlan) -> dict[str, Any]:
    protected = plan.isolation == "process"
    return {
        "mode": "workers",
        "isolation": plan.isolation,
        "measurements": "protected" if protected else "not protected",
        "chunks": len(chunks),
        "chunk_attempts": sum(chunk.attempts for chunk in chunks),
        "workers": sorted({chunk.claimed_by.rsplit(":", 1)[0] for chunk in chunks}),
    }
