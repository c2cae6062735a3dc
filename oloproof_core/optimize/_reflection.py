"""The reflection model writes the next text of a component from the metric's feedback.

One call per component to update, to the `reflection` role's model (see
docs/models.md), with a prompt that shows the current text and the cases it was
tried on: input, output and the metric's feedback and sub-scores. The new text is
the reply's fenced block (or the whole reply). Prompt and reply are recorded; a
resumed optimization that arrives at the same prompt reads the recorded reply
instead of asking again, which keeps the replayed search on its first path.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Mapping, Sequence
from typing import Any

from oloproof_core._util.canonical import canonical_json, digest_text
from oloproof_core.errors import ConfigError
from oloproof_core.models import ModelError, chat, settings_for
from oloproof_core.optimize._budget import Meter
from oloproof_core.optimize._candidates import candidate_digest
from oloproof_core.optimize._ledger import Ledger, ReflectionRecord

PROMPT = """You improve one text component, "{name}", of an AI system.

The system currently uses this text:
```
{text}
```

Here are cases it handled with that text: the input, what it produced, and the \
evaluation's feedback.

{examples}

Write a new text for "{name}" that fixes what the feedback points out and keeps what \
works. State what the task needs in general terms, not only for these cases. Reply \
with the new text only, inside ``` fences."""
MAX_EXAMPLES = 8


def require_reflection_model() -> None:
    """Refuse, before the search, an optimization whose reflection model is not configured."""
    try:
        settings_for("reflection")
    except ModelError as exc:
        raise ConfigError(f"the reflection model writes every new candidate: {exc}") from None


def reflection_prompt(name: str, text: str, examples: Sequence[Mapping[str, Any]]) -> str:
    shown = []
    for number, example in enumerate(examples[:MAX_EXAMPLES], start=1):
        fields = "\n".join(f"{key}: {_plain(value)}" for key, value in example.items())
        shown.append(f"### Case {number}\n{fields}")
    return PROMPT.format(name=name, text=text, examples="\n\n".join(shown))


def new_text_from(reply: str) -> str:
    """The reply's first fenced block (a language tag after the fence is dropped)."""
    start = reply.find("```")
    end = reply.rfind("```")
    if start == -1 or end <= start:
        return reply.strip().strip("`").strip()
    block = reply[start + 3 : end]
    first, _, rest = block.partition("\n")
    if rest and first.strip() and " " not in first.strip():
        block = rest
    return block.strip()


def _plain(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)


class Reflector:
    """Proposes new component texts; callable as GEPA's and DSPy GEPA's proposal function."""

    def __init__(self, *, ledger: Ledger, optimization_id: str, meter: Meter) -> None:
        self.ledger, self.optimization_id, self.meter = ledger, optimization_id, meter
        # A prompt can recur (the search revisits a parent); the k-th time it is asked,
        # a resumed search gets the k-th recorded reply, and a new one after those.
        self._recorded: dict[str, list[ReflectionRecord]] = {}
        for record in sorted(ledger.reflections(optimization_id), key=lambda r: r.occurrence):
            self._recorded.setdefault(record.prompt_digest, []).append(record)
        self._asked: dict[str, int] = {}
        self._proposals: dict[str, dict[str, Any]] = {}
        self._lock = threading.Lock()

    def __call__(
        self,
        candidate: Mapping[str, str],
        reflective_dataset: Mapping[str, Sequence[Mapping[str, Any]]],
        components_to_update: list[str],
    ) -> dict[str, str]:
        updates: dict[str, str] = {}
        notes = []
        for name in components_to_update:
            prompt = reflection_prompt(name, candidate[name], reflective_dataset.get(name, ()))
            reply = self._reply(name, prompt)
            updates[name] = new_text_from(reply) or candidate[name]
            notes.append({"component": name, "prompt": prompt, "reply": reply})
        with self._lock:
            self._proposals[candidate_digest({**candidate, **updates})] = {"calls": notes}
        return updates

    def proposal_for(self, digest: str) -> dict[str, Any] | None:
        """The reflection (prompts and replies) that proposed the candidate with `digest`."""
        with self._lock:
            return self._proposals.get(digest)

    def _reply(self, name: str, prompt: str) -> str:
        digest = digest_text(canonical_json([name, prompt]))
        with self._lock:
            occurrence = self._asked.get(digest, 0)
            self._asked[digest] = occurrence + 1
        recorded = self._recorded.get(digest, [])
        if occurrence < len(recorded):
            return recorded[occurrence].reply
        self.meter.admit(0)
        answer = chat([{"role": "user", "content": prompt}], role="reflection")
        self.meter.charge_call("reflection", answer.cost_usd)
        self.ledger.reflection_add(
            self.optimization_id,
            ReflectionRecord(
                prompt_digest=digest,
                occurrence=occurrence,
                component=name,
                prompt=prompt,
                reply=answer.text,
                cost_usd=answer.cost_usd,
            ),
        )
        return answer.text
