"""Which texts a system's process runs a case with, when one pool serves several releases.

An optimization's candidates are one function reading other component texts, so the
processes that ran one candidate can run the next: interpreter, imports, model client
and warm-up are paid once, not once per candidate. A process starts bound to the texts
of the release its pool was made for. For another release of the same function the
parent sends it `{"bind": [key, texts, version]}` once; the process builds that release,
keeps it under `key` and answers `{"bound": key}`; every case of the release then names
the key as a fourth element of its frame, `[seq, id, input, key]`. A case sent before
the answer would wait in the pipe while the process binds, on the case's clock, so the
parent sends none until the answer is in. A case that comes with environment variables
of its own (its gateway key) has them as a fifth element, the fourth then being the
release's key or null: `[seq, id, input, key | null, {name: value}]`.

A process keeps the last `KEPT` releases it was told, in the order it was told them,
and the parent keeps the same list for it: both drop the oldest on the same message,
so the parent knows which keys each process holds without asking. A replaced process
starts with none.
"""

from __future__ import annotations

import math
import os
import time
from collections import OrderedDict, deque
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from oloproof_core._util.canonical import canonical_json, digest_text
from oloproof_core.execution.isolation._errors import IsolationError
from oloproof_core.execution.isolation._protocol import ProtocolError, frame
from oloproof_core.execution.systems import System

KEPT = 4
"""Releases a process holds besides its own. One at a time is all a run needs."""
BIND_TIMEOUT_S = 120.0
"""A process that has not bound a release by then is replaced, like one that never warms."""


@dataclass(frozen=True, slots=True)
class Binding:
    """A release to bind in the pool's processes: its key, and the message that binds it."""

    key: str
    message: bytes


def binding_for(pool_system: System, release: System | None) -> Binding | None:
    """The binding that runs `release` in processes made for `pool_system` (None: they
    run it as they are). Only the texts and version may differ: the function is the
    one the processes imported."""
    if release is None or release is pool_system:
        return None
    if release.inner is not pool_system.inner:
        raise IsolationError(
            f"{release!r} is not {pool_system!r} with other texts: a pool runs one "
            "system's function, so another function needs a pool of its own"
        )
    if release.components == pool_system.components and release.version == pool_system.version:
        return None
    texts = dict(release.components)
    # The digest is the key in every case frame of the release, so a short one.
    key = digest_text(canonical_json([release.version, texts]))[:16]
    return Binding(key, frame({"bind": [key, texts, release.version]}))


class BoundInProcesses:
    """The parent's side: which keys each slot's process was told, and which it has not
    answered yet (in order: a process answers its bind messages in the order sent).

    A slot's record is its process's: the pool forgets it when the process leaves the
    slot (a crash, a kill, the pool's close), so a new process starts from nothing.
    """

    __slots__ = ("_slots", "binding")

    def __init__(self) -> None:
        self._slots: dict[int, _Held] = {}
        self.binding = 0
        """Bind messages not answered yet, over every process (the pool's quick check)."""

    def holds(self, slot: Any, binding: Binding | None, flush: Callable[[Any], None]) -> bool:
        """Whether the process in `slot` (the pool's `Slot`) can run cases of `binding` now.
        A process never told that release is told now, through the slot's outbox and
        `flush`; it runs none of its cases until it has answered."""
        if binding is None:
            return True
        held = self._slots.get(slot.index)
        if held is None or held.process is not slot.child:
            held = self._slots[slot.index] = _Held(slot.child)
        if binding.key in held.keys:
            return not any(key == binding.key for key, _ in held.unanswered)
        held.keys.append(binding.key)
        if len(held.keys) > KEPT:
            held.keys.popleft()
        held.unanswered.append((binding.key, time.perf_counter()))
        self.binding += 1
        slot.outbox += binding.message
        flush(slot)
        return False

    def answered(self, slot: int, message: Mapping[str, Any]) -> None:
        """The process says it bound a key: cases of that release may go to it."""
        held = self._slots.get(slot)
        if held is None or not held.unanswered or message.get("bound") != held.unanswered[0][0]:
            raise ProtocolError(f"unexpected message {str(dict(message))[:200]!r}")
        held.unanswered.popleft()
        self.binding -= 1

    def forget(self, slot: int) -> None:
        """The slot's process left it: whatever it held went with it."""
        held = self._slots.pop(slot, None)
        if held is not None:
            self.binding -= len(held.unanswered)

    def next_deadline(self) -> float:
        """When the process waited for longest must have answered (inf: none is waited for)."""
        sent = [held.unanswered[0][1] for held in self._slots.values() if held.unanswered]
        return min(sent) + BIND_TIMEOUT_S if sent else math.inf

    def overdue(self, now: float) -> list[int]:
        """The slots whose process has left a bind message unanswered for `BIND_TIMEOUT_S`."""
        return [
            slot
            for slot, held in self._slots.items()
            if held.unanswered and now - held.unanswered[0][1] > BIND_TIMEOUT_S
        ]


class _Held:
    __slots__ = ("keys", "process", "unanswered")

    def __init__(self, process: object) -> None:
        self.process = process
        self.keys: deque[str] = deque()
        self.unanswered: deque[tuple[str, float]] = deque()


def case_message(
    seq: int,
    case_id: str,
    case_input: Any,
    binding: Binding | None,
    environment: Mapping[str, str] | None = None,
) -> list[Any]:
    """A case's frame: its release's key, when it is not the process's own, and the
    environment variables set for the case, if any."""
    key = None if binding is None else binding.key
    if environment:
        return [seq, case_id, case_input, key, dict(environment)]
    if key is None:
        return [seq, case_id, case_input]
    return [seq, case_id, case_input, key]


class BoundReleases:
    """The process's side: its own release, and the ones it was told to bind, by key."""

    __slots__ = ("_kept", "_system")

    def __init__(self, system: System) -> None:
        self._system = system
        self._kept: OrderedDict[str, Callable[[Any], Any]] = OrderedDict()

    def bind(self, message: Mapping[str, Any]) -> bytes:
        """Build the release a bind message names and keep it; the answer to send back."""
        key, texts, version = message["bind"]
        self._kept[key] = self._system.with_components(texts, version=version).fn
        if len(self._kept) > KEPT:
            self._kept.popitem(last=False)
        return frame({"bound": key})

    def case(self, message: list[Any]) -> tuple[int, str, Any, Callable[[Any], Any]]:
        """A case frame's sequence number, id and input, and the function that runs it;
        the environment variables the frame sets for the case are set here."""
        seq, case_id, case_input, *rest = message
        key = rest[0] if rest else None
        if len(rest) > 1:
            os.environ.update(rest[1])
        return seq, case_id, case_input, self._system.fn if key is None else self._kept[key]
