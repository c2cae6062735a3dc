"""How large a transcript may grow, and how what goes over is cut and said.

A transcript is evidence about a case, never a reason for the case to fail: a text over
its cap is cut and ends with a mark saying how much was cut, steps past the cap on their
number or on the transcript's whole size are left out, and the transcript says so in its
`cuts`. The caps bound what the parent process keeps per case (the gateway clips each
text as it records the call) and what the store writes.
"""

from __future__ import annotations

import os
from typing import Any

from oloproof_core._util.canonical import canonical_json

TEXT_CAP = 20_000
"""Characters kept of one text: a message, a reply, a tool call's arguments, a tool's
result, a system step's data (as JSON)."""
STEPS_CAP = 500
"""Steps kept per transcript; later ones are left out."""
TOTAL_CAP_VARIABLE = "OLOPROOF_TRANSCRIPT_KB"
DEFAULT_TOTAL_KB = 1024
"""Thousands of characters of JSON a whole transcript may take by default."""


def total_cap() -> int:
    """The whole transcript's cap in characters of JSON (`OLOPROOF_TRANSCRIPT_KB`)."""
    raw = os.environ.get(TOTAL_CAP_VARIABLE, "").strip()
    if raw.isdigit() and int(raw) > 0:
        return int(raw) * 1000
    return DEFAULT_TOTAL_KB * 1000


def clip_text(text: str, cap: int = TEXT_CAP) -> tuple[str, int]:
    """`text` cut to `cap` characters with a mark at the end; beside it, how many were cut."""
    if len(text) <= cap:
        return text, 0
    cut = len(text) - cap
    return f"{text[:cap]}… [cut: {cut:,} more characters]", cut


def clipped_data(data: Any) -> tuple[Any, int]:
    """JSON data kept whole under the cap; over it, its JSON text cut (and how much was)."""
    text = canonical_json(data)
    if len(text) <= TEXT_CAP:
        return data, 0
    return clip_text(text)


def capped_steps(steps: list[dict[str, Any]], cuts: list[str]) -> list[dict[str, Any]]:
    """The steps kept under the count and size caps, each cut noted in `cuts`."""
    kept: list[dict[str, Any]] = []
    size, limit = 0, total_cap()
    for index, step in enumerate(steps):
        if index >= STEPS_CAP:
            cuts.append(
                f"{len(steps) - index:,} later steps left out: a transcript keeps at most "
                f"{STEPS_CAP} steps"
            )
            break
        size += len(canonical_json(step))
        if size > limit:
            cuts.append(
                f"steps {index + 1:,} to {len(steps):,} left out: the transcript reached its "
                f"{limit:,}-character cap ({TOTAL_CAP_VARIABLE} sets it in thousands)"
            )
            break
        kept.append(step)
    return kept
