"""Case transcripts as kept: one decompressed for its page (shaped for reading), as data
for the API and the exports, or a run's all for a `Result` read back from the store."""

from __future__ import annotations

import json
import zlib
from collections.abc import Iterator, Sequence
from typing import Any

from metrics.batching import batches
from runs.models import CaseTranscript, Run

SUMMARY_CHARS = 100
"""Characters of a folded text shown beside its fold."""
_LABELS = {"message": "message", "tool_result": "tool result", "model_call": "model call"}


def case_transcript(*, run: Run, case_id: str) -> dict[str, Any] | None:
    """The transcript of one case of a run the caller has read through access; None when
    the case has none (no model call through the gateway, no step of its own)."""
    row = (
        CaseTranscript.objects.filter(run=run, case_id=case_id)
        .only("compressed", "digest", "model_calls")
        .first()
    )
    if row is None:
        return None
    data = _unpacked(row.compressed)
    steps = [readable_step(index, step) for index, step in enumerate(data.get("steps") or (), 1)]
    return {
        "steps": steps,
        "cuts": data.get("cuts") or [],
        "flags": data.get("flags") or [],
        "model_calls": row.model_calls,
        "own_steps": sum(step["own"] for step in steps),
        "digest": row.digest,
    }


def readable_step(index: int, step: dict[str, Any]) -> dict[str, Any]:
    """A step with what its line shows: who said it, a summary of its folded text."""
    kind = str(step.get("kind") or "")
    own = step.get("by") == "system"
    text = step.get("text")
    if own:
        text = json.dumps(step.get("data"), indent=2, ensure_ascii=False)
    text = text if isinstance(text, str) else ""
    first = " ".join(text.split())
    return {
        **step,
        "number": index,
        "own": own,
        "label": "system's own step" if own else _LABELS.get(kind, kind),
        "shown_text": text,
        "summary": first[:SUMMARY_CHARS] + ("…" if len(first) > SUMMARY_CHARS else ""),
    }


def case_transcript_data(*, run: Run, case_id: str) -> dict[str, Any] | None:
    """One case's transcript as it was kept (`steps`, `cuts`, `flags`) with its `digest`,
    `model_calls` and `steps_count`; None when the case has none."""
    row = (
        CaseTranscript.objects.filter(run=run, case_id=case_id)
        .only("compressed", "digest", "model_calls", "steps")
        .first()
    )
    if row is None:
        return None
    return {
        **_unpacked(row.compressed),
        "digest": row.digest,
        "model_calls": row.model_calls,
        "steps_count": row.steps,
    }


def transcripts_by_case(*, run_id: int, case_ids: Sequence[str]) -> dict[str, dict[str, Any]]:
    """These cases' transcripts as kept (`steps`, `cuts`, `flags`), by case id: one query
    per thousand cases; a case without one is left out."""
    found: dict[str, dict[str, Any]] = {}
    for batch in batches(list(case_ids), 1000):
        rows = CaseTranscript.objects.filter(run_id=run_id, case_id__in=batch)
        for case_id, compressed in rows.values_list("case_id", "compressed"):
            found[case_id] = _unpacked(compressed)
    return found


def case_ids_with_transcripts(*, run_id: int, case_ids: Sequence[str]) -> set[str]:
    """Which of these cases have a transcript (one narrow query)."""
    rows = CaseTranscript.objects.filter(run_id=run_id, case_id__in=list(case_ids))
    return set(rows.values_list("case_id", flat=True))


def run_transcripts(*, run_id: int) -> Iterator[tuple[str, dict[str, Any]]]:
    """Every transcript of a run as (case id, kept data), streamed."""
    rows = CaseTranscript.objects.filter(run_id=run_id).values_list("case_id", "compressed")
    for case_id, compressed in rows.iterator(chunk_size=200):
        yield case_id, _unpacked(compressed)


def _unpacked(compressed: bytes | memoryview) -> dict[str, Any]:
    data = json.loads(zlib.decompress(bytes(compressed)).decode("utf-8"))
    return data if isinstance(data, dict) else {}
