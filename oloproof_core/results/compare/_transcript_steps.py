"""Where two releases' transcripts of one case part: the first step that differs.

Steps are compared on what was said and done, as the transcript's digest is: a step's
figures (latency, tokens, cost, the time it was taken) are left out, so two runs of the
same conversation do not differ however long each call took. A transcript that ends
before the other differs at the step the longer one goes on with.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from oloproof_core.cases.transcript import MEASURED_FIELDS, Transcript

TranscriptLike = Transcript | Mapping[str, Any] | None
"""A transcript, its `to_dict()` shape (a result file's, the store's), or none."""
_SHOWN_CHARS = 160
"""Characters of a step's text in a line of `difference_lines`."""


@dataclass(frozen=True, slots=True)
class StepDifference:
    """The first step at which two transcripts differ, and each side's step there (None:
    that side's transcript had ended)."""

    number: int
    """The step's number, from 1; every step before it is the same on both sides."""
    baseline: dict[str, Any] | None
    candidate: dict[str, Any] | None
    baseline_steps: int
    candidate_steps: int
    fields: tuple[str, ...]
    """What differs in the step (`kind`, `text`, `tool_calls`, …); empty when a side ended."""

    @property
    def same_before(self) -> int:
        return self.number - 1

    def to_dict(self) -> dict[str, Any]:
        return {
            "step": self.number,
            "same_before": self.same_before,
            "fields": list(self.fields),
            "baseline": self.baseline,
            "candidate": self.candidate,
            "baseline_steps": self.baseline_steps,
            "candidate_steps": self.candidate_steps,
        }


def transcript_steps(transcript: TranscriptLike) -> list[dict[str, Any]]:
    """The steps of any of the shapes a transcript travels in."""
    if transcript is None:
        return []
    if isinstance(transcript, Transcript):
        return list(transcript.steps)
    return [step for step in transcript.get("steps") or () if isinstance(step, dict)]


def said_and_done(step: Mapping[str, Any]) -> dict[str, Any]:
    """A step without its figures: what two steps are compared on."""
    return {key: value for key, value in step.items() if key not in MEASURED_FIELDS}


def first_difference(baseline: TranscriptLike, candidate: TranscriptLike) -> StepDifference | None:
    """The first step at which the two differ, or None when they said and did the same."""
    left, right = transcript_steps(baseline), transcript_steps(candidate)
    for index in range(max(len(left), len(right))):
        old = left[index] if index < len(left) else None
        new = right[index] if index < len(right) else None
        fields = _fields_differing(old, new)
        if fields is not None:
            return StepDifference(index + 1, old, new, len(left), len(right), fields)
    return None


def _fields_differing(
    old: Mapping[str, Any] | None, new: Mapping[str, Any] | None
) -> tuple[str, ...] | None:
    if old is None or new is None:
        return ()
    kept_old, kept_new = said_and_done(old), said_and_done(new)
    if kept_old == kept_new:
        return None
    names = sorted(set(kept_old) | set(kept_new))
    return tuple(name for name in names if kept_old.get(name) != kept_new.get(name))


def step_line(step: Mapping[str, Any] | None) -> str:
    """One step in a line: its kind, who said it, its tool calls or its text (shortened)."""
    if step is None:
        return "(no such step: the transcript had ended)"
    kind = str(step.get("kind") or "step")
    if kind == "system_step":
        said = f"{step.get('name')}: {json.dumps(step.get('data'), ensure_ascii=False)}"
    elif step.get("tool_calls"):
        said = "calls " + ", ".join(_call_text(call) for call in step["tool_calls"])
    else:
        said = str(step.get("text") or "")
    who = step.get("name") if kind == "tool_result" else step.get("role")
    head = kind.replace("_", " ") + (f" ({who})" if who else "")
    said = " ".join(said.split())
    if len(said) > _SHOWN_CHARS:
        said = said[:_SHOWN_CHARS] + "…"
    return f"{head}: {said}" if said else head


def difference_lines(case_id: str, difference: StepDifference | None) -> Sequence[str]:
    """The difference as the command prints it."""
    if difference is None:
        return [f"case {case_id}: the transcripts say and do the same (figures aside)"]
    fields = f" ({', '.join(difference.fields)} differ)" if difference.fields else ""
    return [
        f"case {case_id}: the transcripts first differ at step {difference.number} of "
        f"{difference.baseline_steps} (baseline) and {difference.candidate_steps} "
        f"(candidate){fields}; the {difference.same_before} before it are the same",
        f"  baseline:  {step_line(difference.baseline)}",
        f"  candidate: {step_line(difference.candidate)}",
    ]


def _call_text(call: Any) -> str:
    if not isinstance(call, Mapping):
        return str(call)
    return f"{call.get('name')}({call.get('arguments') or ''})"
