"""A pool's processes in their sandboxes: each one's cgroups, its reply cap, and what a
cap that was hit costs (`_caps`).

`SandboxedKeeper` sits between `ProcessKeeper` and `ProcessPool`. It claims the cgroups
of each process it starts (`Sandbox.claim`) and releases them once the process has
been replaced; it reads each process's replies with the reply cap; and when a case's
error shows that it hit a cap of its sandbox, it says which in the error and drains
the process: it takes no more cases, and is replaced once those it holds are in, so
the next case starts in a fresh sandbox (an empty /tmp, no process left behind).
"""

from __future__ import annotations

from typing import Any

from oloproof_core.cases.case import CaseResult
from oloproof_core.execution.isolation._caps import cap_symptom, memory_cap_hit, output_cap_bytes
from oloproof_core.execution.isolation._keeper import ProcessKeeper
from oloproof_core.execution.isolation._protocol import FrameReader, Oversized
from oloproof_core.execution.isolation._slot import InFlight, Slot, too_large
from oloproof_core.execution.systems import System


class SandboxedKeeper(ProcessKeeper):
    """See the module docstring; `options` are `ProcessKeeper`'s."""

    def __init__(self, system: System, **options: Any) -> None:
        super().__init__(system, **options)
        self._reply_cap = output_cap_bytes()
        if self._sandbox.sandbox is not None:  # the cap of all of a sandbox's processes
            self._sandbox.sandbox.memory_limit_mb = self.memory_limit_mb

    def _occupy(self, slot: Slot) -> None:
        sandbox = self._sandbox.sandbox
        if sandbox is not None:
            sandbox.release(slot.cgroups)  # the slot's last process has ended
        slot.cgroups = None
        super()._occupy(slot)  # an adopted process comes with its cgroups
        slot.reader = FrameReader(self._reply_cap)
        if sandbox is not None and slot.cgroups is None:
            slot.cgroups = sandbox.claim()

    def _too_large(self, slot: Slot, message: Oversized, now: float) -> InFlight:
        """The case of a reply over the reply cap: missing, its bytes never kept."""
        flight = slot.take(message.seq)
        latency_ms = (now - flight.started) * 1000.0
        too_large(flight.record, latency_ms, message.size, self._reply_cap)
        return flight

    def _capped(self, slot: Slot, record: CaseResult) -> None:
        """A case whose error shows it hit a cap of its sandbox says which; its process
        takes no more cases (`_retire_if_drained`)."""
        sandbox = self._sandbox.sandbox
        if sandbox is None or record.error is None:
            return
        reason = cap_symptom(record.error, sandbox.caps)
        if reason is None and slot.cgroups is not None and slot.cgroups.memory_kills():
            reason = memory_cap_hit(self.memory_limit_mb, itself=False)
        if reason is not None:
            record.error.message = f"{reason}: {record.error.message}"
            if slot.state == "ready":
                slot.state = "draining"

    def _retire_if_drained(self, slot: Slot) -> None:
        if slot.state == "draining" and not slot.in_flight:
            self._stop(slot, patient=False)
            self._replace(slot)

    def _killed_for_memory(self, slot: Slot) -> str | None:
        """Why the slot's process died, if its memory cgroup killed it."""
        if slot.cgroups is None or not slot.cgroups.memory_kills():
            return None
        return memory_cap_hit(self.memory_limit_mb, itself=True) + " while running this case"
