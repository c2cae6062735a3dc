"""A case's transcript: what the agent said and did, step by step, as the platform kept it.

Each step is a small JSON object with a `kind`:

- `message`: a message the system sent a model (its `role`: system, user, ...), recorded
  by the gateway from the request that first carried it;
- `tool_result`: a tool's result as the system sent it back to the model (`role` "tool",
  `tool_call_id`, the tool's `name` when an earlier call names it);
- `model_call`: one model call and its reply: `text`, `tool_calls` (each `id`, `name`,
  `arguments` as given, `arguments_not_json` when they are not JSON), the tools offered,
  and the call's `model`, `status`, `latency_ms`, tokens and `cost_usd`;
- `system_step`: work the system reported itself (`current_case().step(name, data)`),
  marked `"by": "system"`; every other step is `"by": "gateway"`.

`cuts` says what the caps cut (`transcript_caps`), `flags` what was odd but kept (tool
arguments that are not JSON). The digest covers what was said and done, not how long it
took or what it cost: a verdict on the same conversation is the same verdict.
"""

from __future__ import annotations

import json
import math
import time
import zlib
from dataclasses import dataclass, field
from typing import Any

from oloproof_core._util.canonical import canonical_json, digest_text
from oloproof_core.cases.transcript_caps import STEPS_CAP, TEXT_CAP, clip_text, clipped_data
from oloproof_core.errors import OloproofError

MEASURED_FIELDS = frozenset({"latency_ms", "input_tokens", "output_tokens", "cost_usd", "at"})
"""A step's figures, left out of the transcript's digest."""
EMPTY_DIGEST = digest_text("null")
_MARK_ROOM = 60
"""Characters a cut mark may add to a text at its cap."""
ZLIB_LEVEL = 6
"""On transcripts the level barely moves the time (bench.agents) and level 6 keeps less."""


@dataclass(frozen=True, slots=True)
class PackedTranscript:
    """A finished transcript as the store keeps it: zlib-compressed canonical JSON of
    `Transcript.to_dict()`, the digest the verdict cache keys on, and its counts."""

    compressed: bytes
    digest: str
    steps: int
    model_calls: int
    cut: bool


@dataclass(slots=True)
class Transcript:
    """The steps of one case, in order, with what was cut and what was flagged."""

    steps: list[dict[str, Any]] = field(default_factory=list)
    cuts: list[str] = field(default_factory=list)
    flags: list[str] = field(default_factory=list)
    left_out: int = field(default=0, compare=False)
    """System steps not kept past the cap on steps (said in `cuts` too)."""
    _packed: PackedTranscript | None = field(default=None, compare=False, repr=False)

    def __len__(self) -> int:
        return len(self.steps)

    @property
    def model_calls(self) -> list[dict[str, Any]]:
        return [step for step in self.steps if step.get("kind") == "model_call"]

    @property
    def system_steps(self) -> list[dict[str, Any]]:
        return [step for step in self.steps if step.get("kind") == "system_step"]

    @property
    def tool_results(self) -> list[dict[str, Any]]:
        return [step for step in self.steps if step.get("kind") == "tool_result"]

    def tool_calls(self) -> list[dict[str, Any]]:
        """Every tool call the models asked for, in order: `name`, `id` and `arguments`
        (parsed when they are JSON, else the text as given)."""
        found = []
        for step in self.model_calls:
            for call in step.get("tool_calls") or ():
                found.append({**call, "arguments": _parsed(call)})
        return found

    def tool_names(self) -> list[str]:
        """The tools called, in order (a tool called twice is named twice)."""
        return [str(call.get("name")) for call in self.tool_calls()]

    def add_system_step(self, name: str, data: Any, *, cut_before: int = 0) -> None:
        """A step of the system's own, data cut to the cap when it is larger (`cut_before`:
        the data is the text of a step cut already, by that many characters)."""
        self._packed = None
        if len(self.steps) >= STEPS_CAP:
            self.leave_out(1)
            return
        if cut_before > 0 and isinstance(data, str):
            kept, cut = clip_text(data, TEXT_CAP + _MARK_ROOM)
            cut += cut_before
        else:
            kept, cut = clipped_data(data)
        step: dict[str, Any] = {
            "kind": "system_step",
            "by": "system",
            "name": name[:200],
            "data": kept,
        }
        step["at"] = time.time()
        if cut:
            step["data_cut"] = cut
            self.cuts.append(f"system step {name[:200]!r}: its data was cut by {cut:,} characters")
        self.steps.append(step)

    def leave_out(self, count: int) -> None:
        """Count system steps not kept, and say so once in `cuts`."""
        self._packed = None
        said = _left_out_note(self.left_out)
        self.left_out += count
        self.cuts = [cut for cut in self.cuts if cut != said] + [_left_out_note(self.left_out)]

    def digest(self) -> str:
        """Digest of what was said and done (the figures left out)."""
        if self._packed is not None:
            return self._packed.digest
        return self._content_digest()

    def packed(self) -> PackedTranscript:
        """The transcript as the store keeps it, made once: called when the case is filed
        (in the run's process, beside the next cases' work), so the store only writes it
        and the verdict cache's key reuses its digest. Steps changed in place after it
        was made are not seen by it; the methods that add steps start it again."""
        if self._packed is None:
            text = canonical_json(self.to_dict())
            compressed = zlib.compress(text.encode("utf-8"), ZLIB_LEVEL)
            calls = sum(step.get("kind") == "model_call" for step in self.steps)
            self._packed = PackedTranscript(
                compressed, self._content_digest(), len(self.steps), calls, bool(self.cuts)
            )
        return self._packed

    def _content_digest(self) -> str:
        content = [
            {key: value for key, value in step.items() if key not in MEASURED_FIELDS}
            for step in self.steps
        ]
        return digest_text(canonical_json({"steps": content, "cuts": self.cuts}))

    def to_dict(self) -> dict[str, Any]:
        return {"steps": self.steps, "cuts": self.cuts, "flags": self.flags}

    @classmethod
    def from_dict(cls, data: Any) -> Transcript:
        """A transcript from `to_dict`'s shape (the store's, a result file's, the wire's)."""
        if not isinstance(data, dict):
            return cls()
        steps = [step for step in data.get("steps") or () if isinstance(step, dict)]
        return cls(
            steps=steps,
            cuts=[str(cut) for cut in data.get("cuts") or ()],
            flags=[str(flag) for flag in data.get("flags") or ()],
        )


def transcript_digest(transcript: Transcript | None) -> str:
    """The digest the verdict cache keys on; a case without a transcript has the empty one."""
    return EMPTY_DIGEST if transcript is None or not transcript.steps else transcript.digest()


def system_steps_from_child(raw: Any) -> Transcript | None:
    """The system's own steps as its process sent them (`{"steps": [...], "left_out": n}`),
    checked as if it lied: only named steps with JSON data and a finite time are kept,
    and the caps hold again."""
    if not isinstance(raw, dict) or not isinstance(raw.get("steps"), list):
        return None
    transcript = Transcript()
    left_out = raw.get("left_out")
    for item in raw["steps"][: STEPS_CAP + 1]:
        if not (isinstance(item, dict) and isinstance(item.get("name"), str)):
            continue
        at, cut = item.get("at"), item.get("data_cut")
        cut = cut if isinstance(cut, int) and not isinstance(cut, bool) else 0
        transcript.add_system_step(item["name"], item.get("data"), cut_before=cut)
        if isinstance(at, (int, float)) and math.isfinite(at) and transcript.steps:
            transcript.steps[-1]["at"] = float(at)
    if isinstance(left_out, int) and not isinstance(left_out, bool) and left_out > 0:
        transcript.leave_out(left_out)
    return transcript if transcript.steps else None


def system_steps_for_parent(transcript: Transcript | None) -> dict[str, Any] | None:
    """In a system's process: its own steps as they travel to the parent."""
    if transcript is None:
        return None
    return {"steps": transcript.system_steps, "left_out": transcript.left_out}


def _left_out_note(count: int) -> str:
    return f"{count:,} system steps past the first {STEPS_CAP} left out"


def checked_step_name(name: Any) -> str:
    if not isinstance(name, str) or not name.strip():
        raise OloproofError(
            "current_case().step(name, data): name is a non-empty string saying what the "
            "step did, e.g. step('search', {'query': q, 'hits': 3})"
        )
    return name


def checked_step_data(name: str, data: Any) -> Any:
    try:
        canonical_json(data)
    except (TypeError, ValueError) as exc:
        raise OloproofError(
            f"step {name!r}: its data is not JSON data ({exc}); give dicts, lists, strings, "
            "numbers, booleans or None"
        ) from None
    return data


def _parsed(call: dict[str, Any]) -> Any:
    arguments = call.get("arguments")
    if call.get("arguments_not_json") or not isinstance(arguments, str):
        return arguments
    try:
        return json.loads(arguments)
    except ValueError:
        return arguments
