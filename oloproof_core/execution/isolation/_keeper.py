"""The processes of a pool: started (in the sandbox where there is one, the system found
by reference or sent by value), replaced when one dies, stopped at the end.
`ProcessPool` builds on it and feeds them cases.

A slot keeps its number when its process is replaced, so anything bound to a slot (an
environment, a gateway key, a release's texts) stays valid. A system its process cannot
load fails the run before its first case: nothing the system's code does makes it run
anywhere with fewer protections.
"""

from __future__ import annotations

import select
import time
from typing import Self

from oloproof_core.execution.isolation._bindings import BoundInProcesses
from oloproof_core.execution.isolation._by_value import how_system_travels, loading_failed
from oloproof_core.execution.isolation._env import ChildEnv, child_environment, env_for_slot
from oloproof_core.execution.isolation._process import (
    AdoptedProcess,
    ChildProcess,
    adopt_child,
    child_setup,
    start_child,
    stop_children,
)
from oloproof_core.execution.isolation._reference import refuse_while_loading
from oloproof_core.execution.isolation._sandbox_choice import SandboxChoice
from oloproof_core.execution.isolation._slot import Slot
from oloproof_core.execution.systems import System

WARMUP_TIMEOUT_S = 120.0
MAX_WARMUP_FAILURES = 3


class ProcessKeeper:
    """A pool's slots and the system processes in them (see the module docstring)."""

    def __init__(
        self,
        system: System,
        *,
        processes: int,
        timeout: float | None,
        memory_limit_mb: int | None,
        child_env: ChildEnv | None,
        start: str,
        grow: bool,
        sandbox: SandboxChoice | None,
        first: AdoptedProcess | None = None,
    ) -> None:
        self.system = system
        self.processes = processes
        self.timeout = timeout
        self.memory_limit_mb = memory_limit_mb
        self._child_env = child_env
        self._reference, self._value = how_system_travels(system, start)
        self._sandbox = sandbox or SandboxChoice.without()
        self._grow = grow
        self.note: str | None = None
        self.restarts = 0
        self._slots: list[Slot] = []
        self._poller = select.poll()
        self._by_fd: dict[int, Slot] = {}
        self._by_out_fd: dict[int, Slot] = {}
        self._bound = BoundInProcesses()
        self._first = first

    def launch(self, processes: int | None = None) -> None:
        """Start the processes (at most `processes`) without waiting for them to be ready."""
        refuse_while_loading()
        wanted = min(self.processes, processes or (1 if self._grow else self.processes))
        while len(self._slots) < wanted:
            self._slots.append(Slot(len(self._slots)))
        for slot in self._slots:
            if slot.state == "stopped" and slot.failures < MAX_WARMUP_FAILURES:
                self._occupy(slot)

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def close(self) -> None:
        """Stop every process: ask nicely (close its pipe), then kill what is left."""
        never_adopted, self._first = self._first, None
        try:
            children = [child for slot in self._slots if (child := self._vacate(slot))]
            stop_children([*children, *([never_adopted[0]] if never_adopted else [])])
        finally:
            if never_adopted is not None and self._sandbox.sandbox is not None:
                self._sandbox.sandbox.release(never_adopted[1])
            self._sandbox.close()

    @property
    def protected(self) -> bool:
        """Whether the system runs where it can touch neither its figures nor the answers.
        Decided by the machine and the operator (the sandbox chosen), never by the system."""
        return self._sandbox.sandbox is not None

    @property
    def travels(self) -> str:
        """How the system reaches its processes: "reference" or "value"."""
        return "reference" if self._reference is not None else "value"

    def _starting(self) -> bool:
        return any(slot.state == "starting" for slot in self._slots)

    def _warmup_failed(self, slot: Slot, failure: str, *, loading: bool = False) -> None:
        self._stop(slot)
        slot.failures += 1
        slot.last_failure = failure
        if loading:
            sandbox = self._sandbox.sandbox
            raise loading_failed(self._reference, failure, sandbox.left_out if sandbox else ())
        if slot.failures < MAX_WARMUP_FAILURES:
            self._occupy(slot)

    def _occupy(self, slot: Slot) -> None:
        setup = child_setup(self.memory_limit_mb, self.timeout)
        first, self._first = (self._first, None) if slot.index == 0 else (None, self._first)
        if first is not None:  # the process that declared the system: told to serve now
            child, slot.cgroups = first
            adopt_child(child, self.system, self._reference, setup, by_value=self._value)
        else:
            environment = child_environment(env_for_slot(self._child_env, slot.index))
            child = start_child(
                self.system,
                self._reference,
                setup,
                environment,
                self._sandbox.sandbox,
                by_value=self._value,
            )
        slot.occupy(child, time.perf_counter(), WARMUP_TIMEOUT_S)
        self._by_fd[child.from_child] = slot
        self._poller.register(child.from_child, select.POLLIN)

    def _replace(self, slot: Slot) -> None:
        self.restarts += 1
        if self._waiting():
            self._occupy(slot)

    def _stop(self, slot: Slot, *, patient: bool = True) -> int:
        """Stop the slot's process (if any) and return how it ended.

        Patient: the process closed its pipe, so it is most likely exiting; waiting a
        moment lets its own exit status, not our kill, be the reason given.
        """
        child = self._vacate(slot)
        if child is None:
            return 0
        if (child.wait_briefly(0.5) if patient else child.poll()) is None:
            child.kill()
        code = child.reap()
        child.close_pipes()
        return code

    def _vacate(self, slot: Slot) -> ChildProcess | None:
        child = slot.vacate()
        self._bound.forget(slot.index)
        if child is not None:
            for fd, table in ((child.from_child, self._by_fd), (child.to_child, self._by_out_fd)):
                if table.pop(fd, None) is not None:
                    self._poller.unregister(fd)
        return child

    def _waiting(self) -> bool:
        """Whether cases wait for a process (the pool's to say): a replacement starts then."""
        return False
