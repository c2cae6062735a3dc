"""A system's first process, started before its pool: it imports the system once.

A run config's system is imported in its sandbox to declare it (`configs.code`); a
run's pool then started a second interpreter to import it again, one after the other,
the slowest part of a small run's start (a model client's import alone takes about half
a second). A `FirstProcess` is that declaring process started as the pool's first
process would be: in a sandbox made for the pool (with the gateway's socket), with the
environment and gateway key of the pool's process 0, importing only the system (never
an evaluator or metric file, whose code may hold answers). After declaring, it waits.
The run's pool adopts it as process 0 when it would have shown that process no more
than the pool's own would see (`fits`); otherwise it is stopped and the pool starts
its own, as before. Nothing the system does decides which: adoption only ever reuses
a sandbox at least as closed as the one it replaces.
"""

from __future__ import annotations

import contextlib
import os
import threading
import weakref
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

from oloproof_core.execution.isolation._kept_paths import kept_from_systems
from oloproof_core.execution.isolation._metered_env import gateway_and_sandbox, metered_environment
from oloproof_core.execution.isolation._process import ChildProcess, stop_children
from oloproof_core.execution.isolation._sandbox_choice import SandboxChoice
from oloproof_core.execution.isolation._sandbox_paths import plan_binds, within

if TYPE_CHECKING:
    from oloproof_core.execution.gateway import Gateway
    from oloproof_core.execution.isolation._caps import SandboxCgroups

FIRST_SLOT = 0


class FirstProcess:
    """The gateway, sandbox and process 0 of a pool that does not exist yet."""

    def __init__(self, *, mode: str, hidden: Iterable[str], memory_limit_mb: int) -> None:
        self.mode, self.memory_limit_mb = mode, memory_limit_mb
        self.gateway, self.choice = gateway_and_sandbox(mode, hidden, say_unprotected=False)
        if self.choice.sandbox is not None:
            self.choice.sandbox.memory_limit_mb = memory_limit_mb
        self.key = self.gateway.issue_key("system", f"process-{FIRST_SLOT}")
        self._parts = _Parts(self.choice, self.gateway)
        self.cwd = os.getcwd()
        self.sys_path: list[str] = []
        self._lock = threading.Lock()
        self._spent = False
        # Stopped when dropped unadopted, or at exit: never left waiting.
        self._finalizer = weakref.finalize(self, _stop, self._parts)

    @property
    def child(self) -> ChildProcess | None:
        return self._parts.child

    @property
    def sandboxed(self) -> bool:
        return self.choice.sandbox is not None

    def environment(self) -> dict[str, str]:
        """The variables of the pool's process 0, models reached through the gateway."""
        return metered_environment(self.gateway, self.key, sandboxed=self.sandboxed)

    def started(self, child: ChildProcess, sys_path: Sequence[str]) -> None:
        """The process is running (its sandbox's cgroups are claimed here)."""
        self._parts.child, self.sys_path = child, list(sys_path)
        sandbox = self.choice.sandbox
        self._parts.cgroups = sandbox.claim() if sandbox is not None else None

    def fits(
        self, *, mode: str, hidden: Iterable[str], memory_limit_mb: int, sys_path: Sequence[str]
    ) -> bool:
        """Whether adopting the process shows it no more than the pool's own process 0
        would see: the same sandbox mode, memory and working folder, every path the pool
        would hide hidden, and no folder shown that the pool would not show."""
        if self._spent or self.child is None or self.child.poll() is not None:
            return False
        if (mode, memory_limit_mb, os.getcwd()) != (self.mode, self.memory_limit_mb, self.cwd):
            return False
        sandbox = self.choice.sandbox
        if sandbox is None:
            return True  # no sandbox either way: the same unprotected process
        ours = [os.path.realpath(path) for path in sandbox.hidden]
        theirs = [*hidden, *kept_from_systems()]
        if not all(any(within(os.path.realpath(p), h) for h in ours) for p in theirs):
            return False
        shown = plan_binds(sys_path, theirs).binds
        return all(
            any(within(bind, wider) for wider in shown)
            for bind in plan_binds(self.sys_path, ours).binds
        )

    def expect_model_calls(self) -> None:
        """The system loaded a model client: start the gateway serving now, in a thread,
        beside the rest of the run's planning, rather than when the pool first hears
        from this process (the server's import alone takes about 0.2 s). A failure here
        is met again, and said, by the pool's own start of it."""

        def serve() -> None:
            # Under the lock: a process stopped meanwhile leaves no server behind, and
            # one handed over is served by its pool, this start waited for.
            with self._lock:
                if self._spent:
                    return
                with contextlib.suppress(Exception):
                    self.gateway.serve(reason="before the cases")

        threading.Thread(target=serve, name="oloproof-gateway-start", daemon=True).start()

    def hand_over(self) -> tuple[Gateway, SandboxChoice, str, ChildProcess, Any]:
        """The gateway, sandbox, key, process and cgroups, now the pool's to run and stop."""
        with self._lock:
            if self._spent or self.child is None:
                raise RuntimeError("this first process was already handed over or stopped")
            self._spent = True
        self._finalizer.detach()
        return self.gateway, self.choice, self.key, self.child, self._parts.cgroups

    def close(self) -> None:
        """Stop the process, its sandbox and its gateway, if no pool took them."""
        with self._lock:
            if self._spent:
                return
            self._spent = True
        self._finalizer()

    def __repr__(self) -> str:
        state = "spent" if self._spent else "waiting"
        return f"<first process {self.child.pid if self.child else '-'} ({state})>"


class _Parts:
    """What stopping an unadopted first process takes (kept apart from it, so that the
    finalizer holds no reference to the `FirstProcess` itself)."""

    __slots__ = ("cgroups", "child", "choice", "gateway")

    def __init__(self, choice: SandboxChoice, gateway: Gateway) -> None:
        self.choice, self.gateway = choice, gateway
        self.child: ChildProcess | None = None
        self.cgroups: SandboxCgroups | None = None


def _stop(parts: _Parts) -> None:
    try:
        if parts.child is not None:
            stop_children([parts.child])
    finally:
        if parts.choice.sandbox is not None:
            with contextlib.suppress(OSError):
                parts.choice.sandbox.release(parts.cgroups)
        parts.choice.close()
        parts.gateway.stop()
