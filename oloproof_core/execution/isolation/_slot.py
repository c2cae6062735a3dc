"""One place in the pool: the process that fills it now, and the cases it holds.

A slot keeps its number when its process dies and another takes its place, so
whatever is bound to a slot (an environment, a gateway key) stays valid across
replacements. `settle` turns a reply into the case's figures; the latency is always
the parent's own measurement, never anything the reply says.

A reply names a case in flight on that process, one whose message the parent had
written whole before it read the reply's first bytes (`Slot.written`, `InFlight.sent`,
`Slot.heard`): a process cannot answer a case before it has been sent.
"""

from __future__ import annotations

import math
from typing import Any, Literal

from oloproof_core.cases.case import CaseError, CaseResult
from oloproof_core.cases.observations import ModelCall
from oloproof_core.cases.transcript import system_steps_from_child
from oloproof_core.cases.workspace_pack import checked_workspace
from oloproof_core.errors import OloproofError
from oloproof_core.execution.isolation._caps import SandboxCgroups
from oloproof_core.execution.isolation._process import ChildProcess
from oloproof_core.execution.isolation._protocol import FrameReader, ProtocolError
from oloproof_core.execution.running import keep_output, timed_out

SlotState = Literal["starting", "ready", "draining", "stopped"]
"""A draining process gets no more cases; it is replaced once those it holds are in
(it hit one of its sandbox's caps, whose effects may outlast the case)."""


class InFlight:
    """A case sent to a process: when it was sent, when it must have come back, and
    whether it runs alone there (run again after its process died with others)."""

    __slots__ = ("alone", "deadline", "record", "sent", "started")

    def __init__(
        self,
        record: CaseResult,
        started: float,
        deadline: float,
        alone: bool = False,
        sent: int = 0,
    ) -> None:
        self.record = record
        self.started = started
        self.deadline = deadline
        self.alone = alone
        self.sent = sent
        """How many bytes the process must have been written to have the whole case."""


class Slot:
    __slots__ = (
        "cgroups",
        "child",
        "failures",
        "heard",
        "in_flight",
        "index",
        "last_failure",
        "outbox",
        "reader",
        "ready_by",
        "state",
        "unheard",
        "written",
    )

    def __init__(self, index: int) -> None:
        self.index = index
        self.child: ChildProcess | None = None
        self.state: SlotState = "stopped"
        self.reader = FrameReader()
        self.in_flight: dict[int, InFlight] = {}
        self.outbox = bytearray()
        self.ready_by = math.inf
        self.failures = 0
        self.last_failure = ""
        self.cgroups: SandboxCgroups | None = None
        self.written = 0
        """Bytes written to the process so far."""
        self.heard = 0
        """`written` when the first bytes of the message being handled were read."""
        self.unheard = 0
        """`written` when the first bytes of a message read only in part were read."""

    def occupy(self, child: ChildProcess, now: float, warmup_timeout_s: float) -> None:
        self.child = child
        self.state = "starting"
        self.reader = FrameReader()
        self.outbox = bytearray()
        self.ready_by = now + warmup_timeout_s
        self.written = self.heard = self.unheard = 0

    def read(self, data: bytes) -> list[tuple[Any, int]]:
        """The messages `data` completes, each with `written` as its first bytes were read
        (the caller read `data` with `written` as it is now)."""
        was_partial = self.reader.partial
        messages = self.reader.feed(data)
        marks = [self.written] * len(messages)
        if was_partial and marks:
            marks[0] = self.unheard
        if self.reader.partial and (messages or not was_partial):
            self.unheard = self.written
        return list(zip(messages, marks, strict=True))

    def take(self, seq: Any) -> InFlight:
        """The case a reply names: in flight here, and sent whole before the reply began."""
        flight = self.in_flight.get(seq) if type(seq) is int else None
        if flight is None or flight.sent > self.heard:
            raise ProtocolError(f"it replied for a case it was not running (case number {seq!r})")
        del self.in_flight[seq]
        return flight

    def next_deadline(self, timeout: float | None) -> float:
        """When this slot next needs the pool: its process's warm-up ends, or a case's time."""
        if self.state == "starting":
            return self.ready_by
        if timeout is None or not self.in_flight:
            return math.inf
        return min(flight.deadline for flight in self.in_flight.values())

    def vacate(self) -> ChildProcess | None:
        """Forget the process (the caller stops it); return it."""
        child, self.child = self.child, None
        self.state = "stopped"
        self.in_flight = {}
        return child


def oldest_start(slots: list[Slot], *, default: float) -> float:
    """When the case in flight longest in these slots was sent (`default` if none is)."""
    return min(
        (flight.started for slot in slots for flight in slot.in_flight.values()), default=default
    )


def settle(
    record: CaseResult,
    reply: list[Any],
    latency_s: float,
    timeout: float | None,
    *,
    reported_calls: bool = True,
) -> None:
    """Fill a case from its process's reply and the parent's own latency figure.

    With `reported_calls` off, the model calls the process reports are ignored: the
    gateway measured them, and a process could under-report its own.
    """
    _, status, payload, artifacts, calls, *own_steps = reply
    record.measurements.latency_ms = latency_s * 1000.0
    if isinstance(artifacts, dict):
        record.artifacts.update(artifacts)
    if own_steps:
        record.trace = system_steps_from_child(own_steps[0])
    if len(own_steps) > 1:
        record.workspace = checked_workspace(own_steps[1])
    if reported_calls and isinstance(calls, list):
        record.measurements.model_calls.extend(_model_calls(calls))
    if status == "ok":
        keep_output(record, payload)
    elif status == "error" and isinstance(payload, list) and len(payload) == 3:
        record.error = CaseError(
            type=str(payload[0]), message=str(payload[1]), traceback=str(payload[2])
        )
    elif status == "timeout":
        timed_out(record, timeout or 0.0)
    else:
        record.error = CaseError(
            type="ProtocolError", message=f"the system's process replied {status!r}"
        )
    if timeout is not None and latency_s > timeout and record.error is None:
        timed_out(record, timeout)


def lose(
    record: CaseResult, latency_ms: float, reason: str, kind: str = "SystemProcessDied"
) -> None:
    """The case is missing because its process ended or misbehaved (`latency_ms`: how
    long after it was sent, never less than 0)."""
    record.output = None
    record.output_json = None
    record.measurements.latency_ms = max(0.0, latency_ms)
    record.error = CaseError(type=kind, message=reason)


def too_large(record: CaseResult, latency_ms: float, size: int, limit: int) -> None:
    """The case's reply was over the reply cap: missing, its bytes never kept."""
    lose(
        record,
        latency_ms,
        f"the system's reply was {size / 2**20:.1f} MiB, over the {limit / 2**20:g} MiB a "
        "reply may take (OLOPROOF_SANDBOX_OUTPUT_MB)",
        "OutputTooLarge",
    )


def last_line(failure: str) -> str:
    """The telling line of a traceback (its last), short enough for a case's reason."""
    lines = failure.strip().splitlines()
    return lines[-1][:500] if lines else "no reason given"


def _model_calls(calls: list[Any]) -> list[ModelCall]:
    # Until model calls are metered outside the child, what it reports is taken as
    # the system's own calls, checked for shape and sign.
    kept = []
    for call in calls:
        if not isinstance(call, dict):
            continue
        try:
            kept.append(
                ModelCall(
                    role="system",
                    model=str(call["model"]),
                    input_tokens=int(call["input_tokens"]),
                    output_tokens=int(call["output_tokens"]),
                    cost_usd=None if call["cost_usd"] is None else float(call["cost_usd"]),
                    latency_ms=float(call["latency_ms"]),
                )
            )
        except (KeyError, TypeError, ValueError, OloproofError):
            continue
    return kept
