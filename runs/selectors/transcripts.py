"""A case's transcript, read for its page: one row, decompressed, shaped for reading."""

from __future__ import annotations

import json
import zlib
from typing import Any

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
    data = json.loads(zlib.decompress(bytes(row.compressed)).decode("utf-8"))
    steps = [_readable(index, step) for index, step in enumerate(data.get("steps") or (), 1)]
    return {
        "steps": steps,
        "cuts": data.get("cuts") or [],
        "flags": data.get("flags") or [],
        "model_calls": row.model_calls,
        "own_steps": sum(step["own"] for step in steps),
        "digest": row.digest,
    }


def _readable(index: int, step: dict[str, Any]) -> dict[str, Any]:
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
