"""A run's chunks: the ledger of who does which cases, and executing one chunk.

Every step is safe to repeat and to run on several workers at once: a worker takes
a chunk with a conditional update (pending, or claimed by a worker whose heartbeat
went stale) and marks it done with another one on its own claim token, in the
transaction that writes the chunk's cases, so a chunk's cases are written and
counted exactly once (and `(run, case_id)` is unique besides). This module is the
only writer of `RunChunk`; the sweep (`runs.workers.sweep`) calls it to hand lost chunks out.
"""

from __future__ import annotations

import logging
import threading
import time
import traceback
import uuid
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from django.db import DatabaseError, connection, transaction
from django.db.models import F, Q
from django.utils import timezone

import oloproof_core as engine
from metrics.bulk_rows import rows_insert
from runs.models import DatasetCase, Run, RunChunk
from runs.store import DjangoStore
from runs.workers.dispatch import Enqueue, send_work, stale_after, worker_name
from runs.workers.run_code import RunCodeError, run_plan_load
from runs.workers.sequential_runs import sequential_rows, sequential_state
from runs.workers.worker_start import failure_reason, waits
from runs.writers.recording import chunk_cases_record, run_fail

logger = logging.getLogger(__name__)

MAX_CHUNK_ATTEMPTS = 5
"""A chunk claimed this many times without finishing fails its run (it kills its workers)."""


# The ledger ------------------------------------------------------------------------


_CHUNK_COLUMNS = (
    "run_id",
    "index",
    "first_position",
    "size",
    "status",
    "claimed_by",
    "attempts",
    "cases_done",
    "judging",
    "execution",
    "judge_asked",
    "touched_at",
    "finished_at",
)


CHUNK_ROWS_PER_STATEMENT = 100_000
"""Chunks per INSERT on SQLite: a run of ten million cases in chunks of 100 is one."""


def chunks_create(*, run_id: int, total: int, size: int, start: int = 0) -> list[int]:
    """Chunks of `size` over the positions [start, total), numbered after the run's others.

    One bulk insert (COPY on PostgreSQL) and one read of their ids, however many chunks,
    with no model instance per chunk: `bulk_create` sent SQLite a statement per 2,730
    chunks (32,766 parameters over 12 columns), so ten million cases in chunks of 100
    took 37.
    """
    now = timezone.now()
    first_index = RunChunk.objects.filter(run_id=run_id).count() if start else 0
    rows_insert(
        model=RunChunk,
        columns=_CHUNK_COLUMNS,
        rows=(
            _chunk_row(run_id, first_index + index, first, min(size, total - first), now)
            for index, first in enumerate(range(start, total, size))
        ),
        ignore_conflicts=False,
        batch_size=CHUNK_ROWS_PER_STATEMENT,
    )
    created = RunChunk.objects.filter(run_id=run_id, index__gte=first_index)
    return list(created.order_by("index").values_list("pk", flat=True))


_PENDING = str(RunChunk.Status.PENDING.value)  # plain text: COPY sends an enum by its name


def _chunk_row(run_id: int, index: int, first: int, size: int, now: datetime) -> tuple[Any, ...]:
    """A pending chunk's row, in the order of `_CHUNK_COLUMNS`."""
    return (run_id, index, first, size, _PENDING, "", 0, 0, {}, {}, {}, now, None)


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


def _chunk_release(chunk_id: int, token: str) -> None:
    RunChunk.objects.filter(pk=chunk_id, status=RunChunk.Status.CLAIMED, claimed_by=token).update(
        status=RunChunk.Status.PENDING, claimed_by="", touched_at=timezone.now()
    )


def _chunk_beat(chunk_id: int, token: str, cases_done: int) -> bool:
    kept = RunChunk.objects.filter(
        pk=chunk_id, status=RunChunk.Status.CLAIMED, claimed_by=token
    ).update(touched_at=timezone.now(), cases_done=cases_done)
    return bool(kept)


def chunks_reclaim_stale(*, chunk_ids: Sequence[int], cutoff: datetime, now: datetime) -> list[int]:
    """Hand back the chunks, among these, whose worker's heartbeat is older than `cutoff`."""
    reclaimed = []
    for chunk_id in chunk_ids:
        reset = RunChunk.objects.filter(
            pk=chunk_id, status=RunChunk.Status.CLAIMED, touched_at__lt=cutoff
        ).update(status=RunChunk.Status.PENDING, claimed_by="", touched_at=now)
        if reset:
            reclaimed.append(chunk_id)
    return reclaimed


def chunks_touch_pending(*, chunk_ids: Sequence[int], now: datetime) -> None:
    """Mark pending chunks as just sent again, so the next sweep gives them time."""
    RunChunk.objects.filter(pk__in=list(chunk_ids), status=RunChunk.Status.PENDING).update(
        touched_at=now
    )


def all_chunks_done(run_id: int) -> bool:
    chunks = RunChunk.objects.filter(run_id=run_id)
    return chunks.exists() and not chunks.exclude(status=RunChunk.Status.DONE).exists()


# Executing one chunk ----------------------------------------------------------------


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
    return _chunk_process(chunk, token, plan)


def _chunk_process(chunk: RunChunk, token: str, plan: engine.RunPlan) -> str:
    try:
        rows = _chunk_rows(chunk)
        with _Heartbeat(chunk, token) as heartbeat:
            cases = engine.process_rows(
                plan, rows, DjangoStore(project=chunk.run.project.slug), progress=heartbeat.progress
            )
        return "done" if _chunk_complete(chunk, token, plan, cases) else "lost"
    except DatabaseError:
        # Likely passing (a lock timeout, a restarted server): hand the chunk back at
        # once rather than after the stale interval, and let the task retry.
        _chunk_hand_back(chunk, token)
        raise
    except Exception as exc:
        # The system's own failures are kept per case by the engine; an exception here
        # is a fault of the platform that a retry would meet again.
        _chunk_release(chunk.pk, token)
        run_fail(
            run_id=chunk.run_id,
            reason=f"chunk {chunk.index} of run {chunk.run_id} failed on worker "
            f"{worker_name()}: " + "".join(traceback.format_exception(exc))[-8000:],
        )
        return "failed"
    except BaseException:
        _chunk_release(chunk.pk, token)  # the worker is shutting down
        raise


def _chunk_hand_back(chunk: RunChunk, token: str) -> None:
    """Release a chunk after a database error, or say why it stays claimed."""
    if not connection.in_atomic_block:  # never inside a caller's transaction
        # The failed connection may be one the server dropped, which never works again:
        # releasing through it failed, and left the chunk to wait for the sweep.
        connection.close()
    try:
        _chunk_release(chunk.pk, token)
    except DatabaseError as exc:
        logger.warning(
            "chunk %s of run %s stays claimed until it looks abandoned, %g s after its "
            "last heartbeat: cannot reach the database to hand it back (%s)",
            chunk.index,
            chunk.run_id,
            stale_after().total_seconds(),
            failure_reason(exc),
        )


def _chunk_rows(chunk: RunChunk) -> list[engine.Row]:
    run = chunk.run
    if run.dataset_id is None:
        # Unreachable: planning sets the dataset in the transaction that makes the chunks.
        raise RuntimeError(f"run {run.pk} has chunks but no dataset")
    if sequential_state(run) is not None:
        return engine.load_dataset(
            sequential_rows(run=run, first=chunk.first_position, size=chunk.size)
        ).rows
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
    # Through the engine's loader, so rows carry the same digests the verdict cache keys on,
    # and their repeat index, which the cache keys on too (a repeat's id ends in it).
    rows = engine.load_dataset(items).rows
    return engine.with_repeat_index(rows) if _repeated(run) else rows


def _repeated(run: Run) -> bool:
    repeats = run.config.get("repeats") or 1
    return engine.is_auto(repeats) or int(repeats) > 1


def _chunk_complete(
    chunk: RunChunk, token: str, plan: engine.RunPlan, cases: Sequence[engine.CaseResult]
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
            execution=plan.execution,
            judge_asked=plan.judge_asked,
        )
        if not finished:
            # Taken for dead and re-claimed by another worker, which records these cases.
            return False
        chunk_cases_record(
            run_id=chunk.run_id,
            cases=cases,
            pass_fail=pass_fail,
            first_position=chunk.first_position,
        )
        # Checked after commit: two chunks finishing together each see the other's
        # commit then, so at least one of them sends the finalising task.
        transaction.on_commit(lambda: _finalise_if_complete(chunk.run_id))
    return True


def _finalise_if_complete(run_id: int) -> None:
    if all_chunks_done(run_id):
        send_work(Enqueue(finalise=[run_id]))


PROGRESS_EVERY_S = 0.5
"""How often a chunk's worker stores its count of cases done, when it changed: often
enough for pages to follow a run case by case, never one write per case at high rates."""


class _Heartbeat:
    """Keeps a claimed chunk's `touched_at` fresh from a thread while the engine works.

    A thread rather than the progress callback, so one slow case (a long model call)
    does not make a live worker look dead. It also stores the chunk's count of cases
    done, at most every `PROGRESS_EVERY_S`, which the progress selectors add to the
    run's count of finished chunks.

    While the database is away it keeps the claim and keeps trying, after waits that
    double up to its interval, and says so in one line when it loses the database and
    one when it is back: a traceback every beat said nothing new and buried the log.
    """

    def __init__(self, chunk: RunChunk, token: str) -> None:
        self.chunk_id = chunk.pk
        self.name = f"heartbeat of chunk {chunk.index} of run {chunk.run_id}"
        self.token = token
        self.interval = stale_after().total_seconds() / 4
        self.every = min(PROGRESS_EVERY_S, self.interval)
        self.cases_done = 0
        self._away_since: float | None = None
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
        stored, stored_at = 0, time.monotonic()
        wait = self.every
        # Capped at the interval, so a beat lands within one interval of the database's
        # return, well before the chunk would look stale to the sweep.
        away_waits = waits(self.every, self.interval)
        try:
            while not self._stop.wait(wait):
                done = self.cases_done
                due = time.monotonic() - stored_at >= self.interval
                if done == stored and not due and self._away_since is None:
                    continue
                kept = self._store(done)
                if kept is None:
                    wait = next(away_waits)
                    continue
                wait, away_waits = self.every, waits(self.every, self.interval)
                if not kept:
                    logger.warning(
                        "%s: the chunk was taken from this worker while its heartbeat was "
                        "stale; this worker will record none of its cases",
                        self.name,
                    )
                    return
                stored, stored_at = done, time.monotonic()
        finally:
            connection.close()

    def _store(self, done: int) -> bool | None:
        """Whether the claim still holds, once stored; None while the database is away."""
        try:
            kept = _chunk_beat(self.chunk_id, self.token, done)
        except DatabaseError as exc:
            # A connection the server dropped never works again: the next try opens one.
            connection.close()
            if self._away_since is None:
                self._away_since = time.monotonic()
                logger.warning(
                    "%s: lost the database (%s); the chunk stays claimed and the heartbeat "
                    "keeps trying, at most %g s apart",
                    self.name,
                    failure_reason(exc),
                    self.interval,
                )
            return None
        except Exception:
            # A fault of the platform rather than an absent database: worth its traceback.
            logger.exception("%s failed; trying again", self.name)
            return None
        if self._away_since is not None:
            away = time.monotonic() - self._away_since
            logger.warning("%s: the database answers again, after %.1f s", self.name, away)
            self._away_since = None
        return kept
