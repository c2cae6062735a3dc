"""Executing a submitted run on the workers: plan it into chunks, execute chunks, finalise.

Every step is safe to repeat and to run on several workers at once:

- planning moves the run from queued to running with a conditional update, in the
  same transaction that creates its chunks;
- a worker takes a chunk with a conditional update (pending, or claimed by a worker
  whose heartbeat went stale) and marks it done with another one on its own claim
  token, in the transaction that writes the chunk's cases, so a chunk's cases are
  written and counted exactly once (and `(run, case_id)` is unique besides);
- finalising moves the run from running to succeeded with a conditional update in
  the transaction that writes metrics and gate, so it happens exactly once.

A worker that dies mid-chunk stops its heartbeat; the sweep (`runs.sweep.runs_sweep`, run
periodically by every worker) hands such chunks, and the work of runs whose
messages were lost with a restarted broker, to the workers again.

The engine does the work (`plan_run`, `process_rows`, `conclude_run`); this module
only decides which rows, records what came out and keeps the run's state.
"""

from __future__ import annotations

import logging
import os
import socket
import threading
import traceback
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

from django.conf import settings
from django.db import DatabaseError, connection, transaction
from django.db.models import F, Q
from django.utils import timezone

from metrics.services import case_verdicts_create, evaluators_ensure, metric_estimates_create
from oloproof_core.case import CaseResult as EngineCaseResult
from oloproof_core.dataset import Dataset as EngineDataset
from oloproof_core.dataset import Row, load_dataset
from oloproof_core.evaluation import RunPlan, conclude_run, plan_run, process_rows
from oloproof_core.judging import JudgingTally
from oloproof_core.result_io import load_result
from oloproof_core.run_config import RunConfig, run_config_from_mapping
from runs.models import Dataset as DatasetRecord
from runs.models import DatasetCase, Run, RunChunk
from runs.selectors import run_result_load
from runs.services import (
    _policy_fields,
    case_results_create,
    dataset_get_or_create,
    gate_record,
    release_get_or_create,
)
from runs.store import DjangoStore
from runs.user_code import forget_changed_project_code, remember_project_code

logger = logging.getLogger(__name__)

MAX_CHUNK_ATTEMPTS = 5
"""A chunk claimed this many times without finishing fails its run (it kills its workers)."""


def chunk_size() -> int:
    return max(1, int(settings.OLOPROOF_CHUNK_SIZE))


def stale_after() -> timedelta:
    return timedelta(seconds=max(1, int(settings.OLOPROOF_CHUNK_STALE_AFTER)))


def worker_name() -> str:
    return f"{socket.gethostname()}:{os.getpid()}"


class RunCodeError(Exception):
    """The run's system, evaluators, policy, baseline or dataset could not be loaded here."""


@dataclass(slots=True)
class Enqueue:
    """Work a step hands on to the workers once its transaction has committed."""

    chunks: list[int] = field(default_factory=list)
    finalise: list[int] = field(default_factory=list)
    start: list[int] = field(default_factory=list)

    def __bool__(self) -> bool:
        return bool(self.chunks or self.finalise or self.start)


def send_work(work: Enqueue) -> None:
    from runs.queue import enqueue_chunk, enqueue_finalise, enqueue_run

    for chunk_id in work.chunks:
        enqueue_chunk(chunk_id)
    for run_id in work.finalise:
        enqueue_finalise(run_id)
    for run_id in work.start:
        enqueue_run(run_id)


def send_work_on_commit(work: Enqueue) -> None:
    if work:
        transaction.on_commit(lambda: send_work(work))


# Loading the run's code -------------------------------------------------------------


def run_config_load(*, run: Run) -> RunConfig:
    """The run's recorded config, with its system and evaluators imported in this process."""
    config = dict(run.config)
    base_dir = str(config.pop("base_dir", "") or os.getcwd())
    forget_changed_project_code(base_dir)
    try:
        loaded = run_config_from_mapping(config, base_dir=base_dir, label=f"run {run.pk} config")
    except Exception as exc:
        raise RunCodeError(_load_failure(run, exc, base_dir)) from exc
    remember_project_code(base_dir)
    return loaded


def run_plan_load(*, run: Run, config: RunConfig | None = None) -> tuple[RunPlan, RunConfig]:
    config = config or run_config_load(run=run)
    try:
        plan = plan_run(
            system=config.system,
            evaluators=config.evaluators,
            policy=config.policy,
            concurrency=config.concurrency,
            timeout=config.timeout,
            confidence=config.confidence,
            isolation=config.isolation,
            memory_limit_mb=config.memory_limit_mb,
        )
    except Exception as exc:
        base_dir = str(run.config.get("base_dir", ""))
        raise RunCodeError(_load_failure(run, exc, base_dir)) from exc
    return plan, config


def _load_failure(run: Run, exc: BaseException, base_dir: str) -> str:
    # The last frame says where user code broke on import (a SyntaxError, a missing
    # dependency); the message names the reference that could not be loaded.
    where = traceback.format_exception_only(exc)[-1].strip()
    return (
        f"worker {worker_name()} could not load the code of run {run.pk} "
        f"(system {run.config.get('system')!r}, base_dir {base_dir!r}): {where}"
    )


def run_fail(*, run_id: int, reason: str) -> bool:
    """Mark an unfinished run failed with a reason people can read; False if it had finished."""
    now = timezone.now()
    failed = Run.objects.filter(
        pk=run_id, status__in=[Run.Status.QUEUED, Run.Status.RUNNING, Run.Status.FINALISING]
    ).update(status=Run.Status.FAILED, error=reason[:20000], finished_at=now)
    if failed:
        logger.warning("run %s failed: %s", run_id, reason)
    return bool(failed)


# Planning ---------------------------------------------------------------------------


def run_start(*, run_id: int) -> str:
    """Plan a queued run: load its code and dataset, record the dataset, create its chunks."""
    run = Run.objects.filter(pk=run_id).first()
    if run is None or run.status != Run.Status.QUEUED:
        return "skipped"
    try:
        plan, config = run_plan_load(run=run)
        dataset = run.dataset
        if dataset is None:
            dataset = _dataset_record(run, config)
    except RunCodeError as exc:
        run_fail(run_id=run_id, reason=str(exc))
        return "failed"
    release = release_get_or_create(system_name=plan.release.name, version=plan.release.version)
    size = chunk_size()
    total = dataset.n_cases
    with transaction.atomic():
        started = Run.objects.filter(pk=run_id, status=Run.Status.QUEUED).update(
            status=Run.Status.RUNNING,
            release=release,
            dataset=dataset,
            cases_total=total,
            cases_done=0,
            cases_failed=0,
            started_at=timezone.now(),
        )
        if not started:
            return "skipped"
        now = timezone.now()
        chunks = RunChunk.objects.bulk_create(
            [
                RunChunk(
                    run_id=run_id,
                    index=index,
                    first_position=first,
                    size=min(size, total - first),
                    touched_at=now,
                )
                for index, first in enumerate(range(0, total, size))
            ]
        )
        send_work_on_commit(Enqueue(chunks=[chunk.pk for chunk in chunks]))
    return "started"


def _dataset_record(run: Run, config: RunConfig) -> DatasetRecord:
    try:
        data = load_dataset(config.dataset, split=config.split)
    except Exception as exc:
        raise RunCodeError(
            f"worker {worker_name()} could not load the dataset of run {run.pk}: {exc}"
        ) from exc
    return dataset_record(data)


def dataset_record(data: EngineDataset) -> DatasetRecord:
    """The dataset's record, its cases written the first time its digest is seen."""
    return dataset_get_or_create(
        digest=data.digest,
        source=data.source,
        splits=data.splits,
        cases=data.rows,  # type: ignore[arg-type]  # rows carry the fields a case is stored by
    )


# Chunks -----------------------------------------------------------------------------


def chunk_execute(*, chunk_id: int) -> str:
    """Execute one chunk if this worker can claim it; record its cases exactly once."""
    token = f"{worker_name()}:{uuid.uuid4().hex[:8]}"
    if not _chunk_claim(chunk_id, token):
        return "skipped"
    chunk = RunChunk.objects.select_related("run").get(pk=chunk_id)
    run = chunk.run
    if chunk.attempts > MAX_CHUNK_ATTEMPTS:
        run_fail(
            run_id=run.pk,
            reason=f"chunk {chunk.index} of run {run.pk} (cases {chunk.first_position} to "
            f"{chunk.first_position + chunk.size - 1}) was started {chunk.attempts - 1} times "
            "and never finished: its worker died each time (out of memory, or killed?)",
        )
        return "failed"
    try:
        plan, _ = run_plan_load(run=run)
    except RunCodeError as exc:
        run_fail(run_id=run.pk, reason=str(exc))
        return "failed"
    try:
        rows = _chunk_rows(run, chunk)
        with _Heartbeat(chunk_id, token) as heartbeat:
            cases = process_rows(plan, rows, DjangoStore(), progress=heartbeat.progress)
        return "done" if _chunk_complete(chunk, token, plan, cases) else "lost"
    except DatabaseError:
        # Likely passing (a lock timeout, a restarted server): hand the chunk back at
        # once rather than after the stale interval, and let the task retry.
        _chunk_release(chunk_id, token)
        raise
    except Exception as exc:
        # The system's own failures are kept per case by the engine; an exception here
        # is a fault of the platform that a retry would meet again.
        _chunk_release(chunk_id, token)
        run_fail(
            run_id=run.pk,
            reason=f"chunk {chunk.index} of run {run.pk} failed on worker {worker_name()}: "
            + "".join(traceback.format_exception(exc))[-8000:],
        )
        return "failed"
    except BaseException:
        _chunk_release(chunk_id, token)  # the worker is shutting down
        raise


def _chunk_release(chunk_id: int, token: str) -> None:
    RunChunk.objects.filter(pk=chunk_id, status=RunChunk.Status.CLAIMED, claimed_by=token).update(
        status=RunChunk.Status.PENDING, claimed_by="", touched_at=timezone.now()
    )


def _chunk_claim(chunk_id: int, token: str) -> bool:
    now = timezone.now()
    claimable = Q(status=RunChunk.Status.PENDING) | Q(
        status=RunChunk.Status.CLAIMED, touched_at__lt=now - stale_after()
    )
    claimed = RunChunk.objects.filter(
        claimable, pk=chunk_id, run__status=Run.Status.RUNNING
    ).update(
        status=RunChunk.Status.CLAIMED,
        claimed_by=token,
        touched_at=now,
        attempts=F("attempts") + 1,
        cases_done=0,
    )
    return claimed == 1


def _chunk_rows(run: Run, chunk: RunChunk) -> list[Row]:
    if run.dataset_id is None:
        # Unreachable: `run_start` sets the dataset in the transaction that makes the chunks.
        raise RuntimeError(f"run {run.pk} has chunks but no dataset")
    records = DatasetCase.objects.filter(
        dataset_id=run.dataset_id,
        position__gte=chunk.first_position,
        position__lt=chunk.first_position + chunk.size,
    ).order_by("position")
    items = []
    for record in records:
        item: dict[str, Any] = {"id": record.case_id, "input": record.input}
        for key in ("expected", "split", "cluster"):
            value = getattr(record, key)
            if value is not None:
                item[key] = value
        items.append(item)
    # Through the engine's loader, so rows carry the same digests the verdict cache keys on.
    return load_dataset(items).rows


def _chunk_complete(
    chunk: RunChunk, token: str, plan: RunPlan, cases: Sequence[EngineCaseResult]
) -> bool:
    pass_fail = frozenset(
        evaluator.criterion for evaluator in plan.evaluators if evaluator.value_type == "pass_fail"
    )
    now = timezone.now()
    with transaction.atomic():
        finished = RunChunk.objects.filter(
            pk=chunk.pk, status=RunChunk.Status.CLAIMED, claimed_by=token
        ).update(
            status=RunChunk.Status.DONE,
            touched_at=now,
            finished_at=now,
            cases_done=len(cases),
            judging={name: tally.to_dict() for name, tally in plan.tallies.items()},
        )
        if not finished:
            # Taken for dead and re-claimed by another worker, which records these cases.
            return False
        case_results_create(
            run_id=chunk.run_id,
            cases=cases,
            pass_fail=pass_fail,
            first_position=chunk.first_position,
        )
        case_verdicts_create(
            run_id=chunk.run_id, cases=cases, batch_size=settings.OLOPROOF_RECORD_CHUNK_SIZE
        )
        Run.objects.filter(pk=chunk.run_id).update(
            cases_done=F("cases_done") + len(cases),
            cases_failed=F("cases_failed") + sum(1 for case in cases if case.error is not None),
        )
        # Checked after commit: two chunks finishing together each see the other's
        # commit then, so at least one of them sends the finalising task.
        transaction.on_commit(lambda: _finalise_if_complete(chunk.run_id))
    return True


def _finalise_if_complete(run_id: int) -> None:
    if _all_chunks_done(run_id):
        send_work(Enqueue(finalise=[run_id]))


def _all_chunks_done(run_id: int) -> bool:
    chunks = RunChunk.objects.filter(run_id=run_id)
    return chunks.exists() and not chunks.exclude(status=RunChunk.Status.DONE).exists()


class _Heartbeat:
    """Keeps a claimed chunk's `touched_at` fresh from a thread while the engine works.

    A thread rather than the progress callback, so one slow case (a long model call)
    does not make a live worker look dead. It also stores the chunk's progress.
    """

    def __init__(self, chunk_id: int, token: str) -> None:
        self.chunk_id = chunk_id
        self.token = token
        self.interval = stale_after().total_seconds() / 4
        self.cases_done = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._beat, name="chunk-heartbeat", daemon=True)

    def progress(self, phase: str, done: int, total: int) -> None:
        if phase == "system":
            self.cases_done = done

    def __enter__(self) -> _Heartbeat:
        self._thread.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self._stop.set()
        self._thread.join()

    def _beat(self) -> None:
        try:
            while not self._stop.wait(self.interval):
                try:
                    kept = RunChunk.objects.filter(
                        pk=self.chunk_id, status=RunChunk.Status.CLAIMED, claimed_by=self.token
                    ).update(touched_at=timezone.now(), cases_done=self.cases_done)
                except Exception:
                    logger.exception("heartbeat of chunk %s failed; retrying", self.chunk_id)
                    continue
                if not kept:
                    return
        finally:
            connection.close()


# Finalising -------------------------------------------------------------------------


def run_finalise(*, run_id: int) -> str:
    """Aggregate every recorded case, decide the gate and mark the run succeeded, once."""
    run = Run.objects.select_related("dataset").filter(pk=run_id).first()
    if run is None or run.status != Run.Status.RUNNING or not _all_chunks_done(run_id):
        return "skipped"
    try:
        plan, config = run_plan_load(run=run)
        baseline = load_result(config.baseline) if config.baseline else None
    except Exception as exc:
        reason = str(exc) if isinstance(exc, RunCodeError) else _load_failure(run, exc, "")
        run_fail(run_id=run_id, reason=reason)
        return "failed"
    for chunk in RunChunk.objects.filter(run_id=run_id).only("judging"):
        for name, counts in chunk.judging.items():
            plan.tallies.setdefault(name, JudgingTally()).add(JudgingTally(**counts))
    cases = run_result_load(run=run).cases
    record = run.dataset
    assert record is not None, "a running run has its dataset recorded"
    dataset = EngineDataset(source=record.source, rows=[], digest=record.digest, split=run.split)
    started_at = run.started_at or run.created_at
    finished_at = timezone.now()
    store = DjangoStore()
    result = conclude_run(
        plan,
        cases,
        dataset,
        store,
        started_at=started_at,
        duration_s=(finished_at - started_at).total_seconds(),
        baseline=baseline,
    )
    result.provenance["execution"] = _execution_provenance(run_id)
    with transaction.atomic():
        succeeded = Run.objects.filter(pk=run_id, status=Run.Status.RUNNING).update(
            status=Run.Status.SUCCEEDED,
            provenance=result.provenance,
            confidence=plan.confidence,
            finished_at=finished_at,
            duration_s=result.provenance["duration_s"],
            error="",
            **_policy_fields(result.provenance.get("policy")),
        )
        if not succeeded:
            return "skipped"
        evaluators = evaluators_ensure(descriptions=result.provenance["evaluators"])
        metric_estimates_create(run_id=run_id, metrics=result.metrics, evaluators=evaluators)
        if result.gate is not None:
            gate_record(run=run, gate=result.gate.to_dict(), decided_at=finished_at)
    return "succeeded"


def _execution_provenance(run_id: int) -> dict[str, Any]:
    chunks = list(RunChunk.objects.filter(run_id=run_id).values("claimed_by", "attempts"))
    return {
        "mode": "workers",
        "chunks": len(chunks),
        "chunk_attempts": sum(chunk["attempts"] for chunk in chunks),
        "workers": sorted({chunk["claimed_by"].rsplit(":", 1)[0] for chunk in chunks}),
    }
