"""A run that lets its cases go: run in batches, each recorded as it finishes.

A run that keeps only the figures of its cases (`run_evaluation(keep_cases=False)`)
takes its dataset in batches; each batch is run, judged, handed to a store that records
as it goes (`RecordsAsItGoes`) and slimmed (`CaseResult.without_payload`) before the
next one starts. Memory then follows the batch, not the dataset: the rows of a dataset
the run loaded itself are let go of too, as their batch is taken.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from contextlib import suppress

from oloproof_core._util.gc_tuning import fewer_collections
from oloproof_core.cases.case import CaseResult
from oloproof_core.datasets.rows import Dataset, Row
from oloproof_core.execution.running import ProgressCallback
from oloproof_core.results.result import Result
from oloproof_core.results.store import RecordsAsItGoes, RunOpening, Store

BATCH = 2000
"""Cases a run keeps whole at once when it lets them go."""
FIRST_BATCH = 750
"""Cases in a run's first batch: a quick system's first cases start about when the
store's process has opened, and this many take it a little past that."""
SMALLEST_LAST_BATCH = 100
"""Below this the last stretch stays whole: splitting it costs a round trip to the store
(its verdict cache, the batch's pickle) that writing so few cases ahead does not repay."""

ProcessRows = Callable[[Sequence[Row], ProgressCallback | None], list[CaseResult]]


class RecordingAsItGoes:
    """A run recorded in a store that records as it goes.

    The run is opened as its cases start (`open`): a store in a process of its own takes
    the opening without an answer, so the first cases never wait for it, and has opened
    the run by the time the first batch is judged.
    """

    def __init__(self, store: Store, opening: RunOpening) -> None:
        self._store: RecordsAsItGoes = store  # type: ignore[assignment]
        self._opening = opening
        self._run_id: str | None = None
        self._closed = False

    def open(self) -> str:
        """Open the run unless it is open already; the id the store knows it by."""
        if self._run_id is None:
            self._run_id = self._store.run_open(self._opening)
        return self._run_id

    def add(self, cases: Sequence[CaseResult], first_position: int) -> None:
        self._store.run_cases_add(self.open(), cases, first_position)

    def close(self, result: Result) -> str:
        run_id = self._store.run_close(self.open(), result)
        self._closed = True
        return run_id

    def abandon(self, exc: BaseException) -> None:
        """Mark the run failed with the reason it stopped, unless it was concluded."""
        if self._closed or self._run_id is None:
            return
        self._closed = True
        reason = f"the run stopped before it finished: {type(exc).__name__}: {exc}"
        with suppress(Exception):  # the caller sees the store's own failure already
            self._store.run_abandon(self._run_id, reason)


def process_in_batches(
    data: Dataset,
    process: ProcessRows,
    progress: ProgressCallback | None,
    recording: RecordingAsItGoes | None,
    *,
    owned: bool,
) -> list[CaseResult]:
    """Run and judge the rows (`process`) batch by batch, record each batch, and keep
    each case slimmed; the rows of a dataset the run `owned` go with their batch."""
    rows = data.rows
    total = len(rows)
    if owned:
        data.rows = []
    kept: list[CaseResult] = []
    if recording is not None:
        recording.open()
    for start, end in batch_bounds(total):
        if owned:
            batch, rows[: end - start] = rows[: end - start], []
        else:
            batch = rows[start:end]
        cases = process(batch, _offset(progress, start, total))
        del batch
        if recording is not None:
            recording.add(cases, start)
        with fewer_collections():
            kept.extend(case.without_payload() for case in cases)
    return kept


def batch_bounds(total: int) -> list[tuple[int, int]]:
    """Where each batch of `total` cases starts and ends: `FIRST_BATCH` cases, then twice
    the one before up to `BATCH`, and the last stretch cut so that its final quarter is
    a batch of its own.

    The store writes a batch while the next one runs. A first batch that ends soon after
    the store has opened keeps it from idling while the run goes on; one that ended
    before would wait for it (its verdict cache). What is left to write once the cases
    are done is the last batch, so a small one keeps that wait short (a 1,000-case run's
    store writes 750 cases while the last 250 run).
    """
    bounds = []
    start, size = 0, FIRST_BATCH
    while start < total:
        bounds.append((start, min(start + size, total)))
        start, size = start + size, min(2 * size, BATCH)
    if bounds:
        start, end = bounds[-1]
        last = (end - start) // 4
        if last >= SMALLEST_LAST_BATCH:
            bounds[-1:] = [(start, end - last), (end - last, end)]
    return bounds


def _offset(progress: ProgressCallback | None, start: int, total: int) -> ProgressCallback | None:
    """A batch's progress as the whole run's."""
    if progress is None:
        return None
    return lambda phase, done, _batch_total: progress(phase, start + done, total)
