"""A pool of system processes that the parent feeds one case at a time and times itself.

One `select.poll` loop: send a case to a process with room and note the time; note it
again the moment the reply is readable — that interval is the latency. A process that
dies or must be killed (timeout) loses only its own cases and is replaced. Async
systems hold up to `per_process` cases per event loop, never more, so no case waits in
a queue inside the child while its clock runs; when such a process dies with several
cases in flight, each is run again alone (`_retries`), so only the culprit is lost.

A growing pool (`grow=True`) starts one process and adds more as the work needs them
(`_pace`). Starting, replacing and stopping the processes is `_keeper`'s.
"""

from __future__ import annotations

import itertools
import math
import os
import select
import time
from collections import deque
from collections.abc import Sequence
from typing import Any

from oloproof_core.cases.case import CaseError, CaseResult
from oloproof_core.execution.running import ProgressCallback, timed_out
from oloproof_core.execution.systems import System

from ._bindings import Binding, binding_for, case_message
from ._env import ChildEnv
from ._errors import IsolationError
from ._hooks import CaseHook, CaseStartHook, ReadyHook
from ._keeper import WARMUP_TIMEOUT_S
from ._pace import Pace
from ._process import AdoptedProcess, exit_reason
from ._protocol import Oversized, ProtocolError, frame
from ._retries import Retries, failed_alone
from ._sandbox_choice import SandboxChoice
from ._sandboxed import SandboxedKeeper
from ._sizing import DEFAULT_MEMORY_LIMIT_MB
from ._slot import InFlight, Slot, last_line, lose, oldest_start, settle
from ._spin import poll_soon, spin_for

_ASYNC_GRACE_S = 1.0
_PROGRESS_INTERVAL_S = 0.2
_READ_SIZE = 1 << 16
_LONGEST_WAIT_S = 0.5
"""The pool's wait is never longer: Ctrl-C may reach another of this process's threads,
which sets Python's flag but wakes no wait of this one (a case sleeping for minutes
would keep the command from stopping)."""


class ProcessPool(SandboxedKeeper):
    """Runs a system's cases in child processes; see the module docstring.

    `child_env` is added to each child's scrubbed environment (a mapping, or a
    function of the slot number); the hooks (`_hooks`) run as cases are sent and end
    and as processes become ready. `start` is "auto" (by reference when the system
    has one, else by value), "reference" or "value". `sandbox` (`SandboxChoice`) says
    whether the processes run in a sandbox, and whether they may run without one.
    `first`: a process started before the pool, which imported the system already and
    becomes process 0 (`_first_process`).
    """

    def __init__(
        self,
        system: System,
        *,
        processes: int,
        per_process: int = 1,
        timeout: float | None = None,
        memory_limit_mb: int | None = DEFAULT_MEMORY_LIMIT_MB,
        child_env: ChildEnv | None = None,
        on_case_start: CaseStartHook | None = None,
        on_case_end: CaseHook | None = None,
        on_ready: ReadyHook | None = None,
        start: str = "auto",
        reported_calls: bool = True,
        grow: bool = False,
        sandbox: SandboxChoice | None = None,
        first: AdoptedProcess | None = None,
    ) -> None:
        if processes < 1 or per_process < 1:
            raise ValueError("a pool needs at least one process holding at least one case")
        super().__init__(
            system,
            processes=processes,
            timeout=timeout,
            memory_limit_mb=memory_limit_mb,
            child_env=child_env,
            start=start,
            grow=grow,
            sandbox=sandbox,
            first=first,
        )
        self.per_process = per_process
        self._on_start, self._on_end, self._on_ready = on_case_start, on_case_end, on_ready
        self._reported_calls = reported_calls
        self._seq = itertools.count()
        self._pending: deque[CaseResult] = deque()
        self._retries = Retries()
        self._pace = Pace()
        self._cap = processes
        self._binding: Binding | None = None
        self._spin_s = 0.0

    def start(self, processes: int | None = None) -> None:
        """Start and warm the processes (at most `processes`); returns once they are ready."""
        self.launch(processes)
        while self._starting():
            self._pump()
        if not any(slot.state == "ready" for slot in self._slots):
            failure = max(self._slots, key=lambda slot: slot.failures).last_failure
            raise IsolationError(f"the system could not be started in its own process:\n{failure}")

    def describe(self) -> dict[str, Any]:
        """What the run's provenance says about how the system was run."""
        protected = self.protected
        return {
            "isolation": "process",
            "measurements": "protected" if protected else "not protected",
            "answers": "protected" if protected else "not protected",
            "sandbox": self._sandbox.describe(),
            "start": self.travels,
            "reference": None if self._reference is None else self._reference.describe(),
            "processes": len(self._slots),
            "cases_per_process": self.per_process,
            "memory_limit_mb": self.memory_limit_mb,
            "restarts": self.restarts,
            "retried": self._retries.describe(),
            "model_cost": "as reported by the system's process",
            "note": self.note,
        }

    def run(
        self,
        cases: Sequence[CaseResult],
        progress: ProgressCallback | None = None,
        *,
        release: System | None = None,
    ) -> None:
        """Fill every case's output (or error) and latency, in place; as `release`, another
        release of the pool's system, if given (`_bindings`)."""
        if not cases:
            return
        self._binding = binding_for(self.system, release)
        self._cap = math.ceil(len(cases) / self.per_process)
        self.start(1 if self._grow else self._cap)
        if not self.protected:
            for case in cases:
                case.measurements.protected = False
        self._pace.begin(time.perf_counter())
        self._pending.extend(cases)
        try:
            self._drive(len(cases), progress)
        finally:
            self._pending.clear()
            self._binding = None
            self._retries.clear()

    def _drive(self, total: int, progress: ProgressCallback | None) -> None:
        for slot in self._slots:
            self._fill(slot)
        last_report = time.monotonic()
        while self._waiting() or any(slot.in_flight for slot in self._slots):
            if not any(slot.state != "stopped" for slot in self._slots):
                self._give_up()
                break
            self._pump()
            self._grow_if_behind(time.perf_counter())
            if progress is not None and time.monotonic() - last_report > _PROGRESS_INTERVAL_S:
                held = sum(len(slot.in_flight) for slot in self._slots)
                waiting = len(self._pending) + len(self._retries)
                progress("system", total - waiting - held, total)
                last_report = time.monotonic()

    def _pump(self) -> None:
        """Wait for the next events (or the nearest deadline) and handle them."""
        wait = min(self._next_deadline() - time.perf_counter(), _LONGEST_WAIT_S)
        events = poll_soon(self._poller, max(0, math.ceil(wait * 1000)), self._spin_s)
        now = time.perf_counter()
        for fd, _ in events:
            slot = self._by_fd.get(fd)
            if slot is not None:
                self._readable(slot, now)
            elif (out := self._by_out_fd.get(fd)) is not None:
                self._flush(out)
        self._expire(time.perf_counter())

    def _readable(self, slot: Slot, now: float) -> None:
        assert slot.child is not None
        try:
            data = os.read(slot.child.from_child, _READ_SIZE)
        except BlockingIOError:
            return
        except OSError:
            data = b""
        if not data:
            self._lost(slot, now)
            return
        child = slot.child
        try:
            for message, heard in slot.read(data):
                if slot.child is not child:
                    break
                slot.heard = heard
                self._received(slot, message, now)
        except (ProtocolError, ValueError, TypeError, KeyError) as exc:
            if slot.child is child:
                self._lost(
                    slot,
                    now,
                    f"the system's process was stopped while running this case: it broke "
                    f"the protocol ({exc})",
                )

    def _received(self, slot: Slot, message: Any, now: float) -> None:
        if slot.state == "starting":
            if isinstance(message, dict) and "ready" in message:
                assert slot.child is not None
                slot.state = "ready"
                slot.failures = 0
                self._pace.ready(now - slot.child.launched_at)
                if self._on_ready is not None:
                    self._on_ready(slot.index, message["ready"])
                self._fill(slot)
            else:
                failed = message if isinstance(message, dict) else {}
                loading = failed.get("loading") is True
                self._warmup_failed(slot, str(failed.get("failed") or message), loading=loading)
            return
        if isinstance(message, dict):  # it bound the release of the cases to come
            self._bound.answered(slot.index, message)
            self._fill(slot)
            return
        if isinstance(message, Oversized):  # read past, never kept
            flight = self._too_large(slot, message, now)
            self._pace.settle(now - flight.started)
            self._fill(slot)
            self._ended(slot, flight)
            return
        if not isinstance(message, list) or len(message) not in (5, 6, 7):
            raise ProtocolError(f"unexpected message {str(message)[:200]!r}")
        flight = slot.take(message[0])
        failed = message[1] != "ok"
        if not failed:
            self._fill(slot)  # keep the process busy before doing the parent's bookkeeping
        latency_s = now - flight.started
        self._pace.settle(latency_s)
        self._spin_s = spin_for(latency_s)
        settle(flight.record, message, latency_s, self.timeout, reported_calls=self._reported_calls)
        if failed:  # a failure may show a cap of its sandbox was hit: known before the next
            self._capped(slot, flight.record)
            self._fill(slot)
        self._ended(slot, flight)
        self._retire_if_drained(slot)

    def _grow_if_behind(self, now: float) -> None:
        """Add the processes the pace asks for (`Pace.to_add`); cheap checks first."""
        if not self._pace.due(now):
            return
        limit, slots = min(self.processes, self._cap), len(self._slots)
        if not self._grow or not self._waiting() or slots >= limit or self._starting():
            return
        oldest = oldest_start(self._slots, default=now)
        ready = sum(slot.state == "ready" for slot in self._slots)
        if added := self._pace.to_add(now, len(self._pending), now - oldest, ready, slots, limit):
            self.launch(slots + added)

    def _waiting(self) -> bool:
        return bool(self._pending or self._retries)

    def _fill(self, slot: Slot) -> None:
        """Send cases to a ready process until it holds `per_process` of them; a case run
        again alone waits for an empty process and keeps it to itself."""
        if slot.state == "ready" and not self._bound.holds(slot, self._binding, self._flush):
            return
        while slot.state == "ready" and len(slot.in_flight) < self.per_process:
            if any(flight.alone for flight in slot.in_flight.values()):
                return
            if self._retries:
                if slot.in_flight:
                    return
                self._send(slot, self._retries.take(), alone=True)
                return
            if not self._pending:
                return
            self._send(slot, self._pending.popleft(), alone=False)

    def _send(self, slot: Slot, record: CaseResult, *, alone: bool) -> None:
        seq = next(self._seq)
        environment = None if self._on_start is None else self._on_start(slot.index, record.id)
        try:
            data = frame(case_message(seq, record.id, record.input, self._binding, environment))
        except (TypeError, ValueError) as exc:
            record.error = CaseError(
                type="InputNotSerializable",
                message=f"the case's input is not JSON data ({exc})",
            )
            if self._on_end is not None:  # it began for the hooks: it ends for them too
                self._on_end(slot.index, record.id)
            return
        started = time.perf_counter()
        sent = slot.written + len(slot.outbox) + len(data)
        slot.in_flight[seq] = InFlight(record, started, self._deadline_from(started), alone, sent)
        slot.outbox += data
        self._flush(slot)

    def _flush(self, slot: Slot) -> None:
        assert slot.child is not None
        fd = slot.child.to_child
        try:
            written = os.write(fd, slot.outbox)
        except BlockingIOError:
            written = 0
        except OSError:  # the child is gone; its pipe's end of file will say why
            written = len(slot.outbox)
        del slot.outbox[:written]
        slot.written += written
        if slot.outbox and fd not in self._by_out_fd:
            self._by_out_fd[fd] = slot
            self._poller.register(fd, select.POLLOUT)
        elif not slot.outbox and fd in self._by_out_fd:
            del self._by_out_fd[fd]
            self._poller.unregister(fd)

    def _deadline_from(self, started: float) -> float:
        if self.timeout is None:
            return math.inf
        # An async child enforces the timeout itself; the parent steps in only when its
        # event loop is blocked and cannot.
        return started + self.timeout + (_ASYNC_GRACE_S if self.system.is_async else 0.0)

    def _next_deadline(self) -> float:
        deadline = min((slot.next_deadline(self.timeout) for slot in self._slots), default=math.inf)
        return min(deadline, self._bound.next_deadline()) if self._bound.binding else deadline

    def _expire(self, now: float) -> None:
        for slot in self._slots:
            if slot.state == "starting" and slot.ready_by <= now:
                self._warmup_failed(slot, f"it was not ready after {WARMUP_TIMEOUT_S:g} s")
            elif self.timeout is not None and any(
                flight.deadline <= now for flight in slot.in_flight.values()
            ):
                self._timed_out(slot, now)
        if self._bound.binding:
            for index in self._bound.overdue(now):  # stuck: replaced like one that never warms
                self._lost(self._slots[index], now, "it did not bind a release's texts in time")

    def _timed_out(self, slot: Slot, now: float) -> None:
        assert self.timeout is not None
        flights = list(slot.in_flight.values())
        self._stop(slot, patient=False)
        overdue = [flight for flight in flights if flight.deadline <= now]
        for flight in flights:
            if flight.deadline > now:  # sent after the loop stopped: not a suspect
                self._pending.appendleft(flight.record)
            elif len(overdue) > 1:  # which of them blocked the loop is not known
                self._retries.add(flight.record)
            else:
                timed_out(flight.record, self.timeout)
                flight.record.measurements.latency_ms = (now - flight.started) * 1000.0
            self._ended(slot, flight)
        self._replace(slot)

    def _lost(self, slot: Slot, now: float, reason: str | None = None) -> None:
        """The process closed its pipe or misbehaved: its cases are lost, the slot refilled."""
        if slot.state == "starting":
            self._warmup_failed(slot, reason or "its process ended before it was ready")
            return
        flights = list(slot.in_flight.values())
        code = self._stop(slot)
        reason = reason or self._killed_for_memory(slot)
        if reason is None:
            reason = f"the system's process {exit_reason(code)} while running this case"
        for flight in flights:
            if len(flights) > 1:  # any one of them may have done it: each runs again alone
                self._retries.add(flight.record)
            else:
                why = failed_alone(reason) if flight.alone else reason
                lose(flight.record, (now - flight.started) * 1000.0, why)
            self._ended(slot, flight)
        self._replace(slot)

    def _ended(self, slot: Slot, flight: InFlight) -> None:
        if self._on_end is not None:
            self._on_end(slot.index, flight.record.id)

    def _give_up(self) -> None:
        failure = max(self._slots, key=lambda slot: slot.failures).last_failure
        reason = "the system's process could not be restarted: " + last_line(failure)
        while self._pending:
            lose(self._pending.popleft(), 0.0, reason)
        while self._retries:
            lose(self._retries.take(), 0.0, reason)
