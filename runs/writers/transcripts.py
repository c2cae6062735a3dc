"""The one writer of case transcripts: compressed, in batches, once per (run, case).

Called by the recording of a run's cases (`runs.writers.recording.case_results_create`)
on every path a run is recorded by, in the same transaction as the cases it belongs to.
"""

from __future__ import annotations

import zlib
from collections.abc import Iterator, Sequence

import oloproof_core as engine
from metrics.batching import batches
from runs.models import CaseTranscript

BATCH = 200
"""Transcripts per INSERT: each can be a megabyte before compression."""


def case_transcripts_create(
    *, run_id: int, cases: Sequence[engine.CaseResult], new_rows: bool = False
) -> int:
    """Keep the transcript of each case that has one; a case's kept one is not replaced."""
    written = 0
    for batch in batches(_transcripts(run_id, cases), BATCH):
        CaseTranscript.objects.bulk_create(batch, ignore_conflicts=not new_rows)
        written += len(batch)
    return written


def _transcripts(run_id: int, cases: Sequence[engine.CaseResult]) -> Iterator[CaseTranscript]:
    seen: set[str] = set()
    for case in cases:
        trace = case.trace
        if trace is None or not trace.steps or case.id in seen:
            continue
        seen.add(case.id)
        compressed, digest = packed(trace)
        yield CaseTranscript(
            run_id=run_id,
            case_id=case.id,
            compressed=compressed,
            digest=digest,
            steps=len(trace.steps),
            model_calls=len(trace.model_calls),
            cut=bool(trace.cuts),
        )


def packed(trace: engine.Transcript) -> tuple[bytes, str]:
    """The transcript as stored (compressed JSON) and its digest."""
    text = engine.canonical_json(trace.to_dict())
    return zlib.compress(text.encode("utf-8"), 6), trace.digest()
