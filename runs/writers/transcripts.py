"""The one writer of case transcripts: compressed, in batches, once per (run, case).

Called by the recording of a run's cases (`runs.writers.recording.case_results_create`)
on every path a run is recorded by, in the same transaction as the cases it belongs to.
A transcript arrives packed (`Transcript.packed()`: compressed JSON and digest, made when
its case was filed); one that was not is packed here. The rows go through the bulk path
the other per-case tables take (`metrics.bulk_rows`), not one ORM instance each.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator, Sequence
from typing import Any

import oloproof_core as engine
from metrics.bulk_rows import rows_insert
from runs.models import CaseTranscript

BATCH = 200
"""Transcripts per INSERT: each can be a megabyte before compression."""
COLUMNS = ("run_id", "case_id", "compressed", "digest", "steps", "model_calls", "cut")


def case_transcripts_create(
    *, run_id: int, cases: Sequence[engine.CaseResult], new_rows: bool = False
) -> int:
    """Keep the transcript of each case that has one; a case's kept one is not replaced.
    Cases without any (a run with no model call) cost no statement at all."""
    rows = _transcripts(run_id, cases)
    first = next(rows, None)
    if first is None:
        return 0
    return rows_insert(
        model=CaseTranscript,
        columns=COLUMNS,
        rows=itertools.chain((first,), rows),
        ignore_conflicts=not new_rows,
        batch_size=BATCH,
    )


def _transcripts(run_id: int, cases: Sequence[engine.CaseResult]) -> Iterator[tuple[Any, ...]]:
    seen: set[str] = set()
    for case in cases:
        trace = case.trace
        if trace is None or not trace.steps or case.id in seen:
            continue
        seen.add(case.id)
        packed = trace.packed()
        yield (
            run_id,
            case.id,
            packed.compressed,
            packed.digest,
            packed.steps,
            packed.model_calls,
            packed.cut,
        )
