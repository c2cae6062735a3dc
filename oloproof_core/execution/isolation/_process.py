"""Starting one system's process and telling how it ended.

Every child is a fresh interpreter (`subprocess`) given only the pipe ends it needs and
a scrubbed environment, inside a sandbox where one is given (`_sandbox`). It finds the
system by reference or receives it by value (`_reference`, `_by_value`); it is never a
copy of this process, which holds the answers, the store and the operator's secrets.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from collections.abc import Mapping
from typing import Any

from oloproof_core._util.install import INSTALL_ROOT
from oloproof_core._util.serving_process import start_serving_process, wait_for_exit
from oloproof_core.execution.isolation._protocol import frame
from oloproof_core.execution.isolation._reference import SystemReference
from oloproof_core.execution.isolation._sandbox import Sandbox
from oloproof_core.execution.systems import System

_PACKAGE_ROOT = INSTALL_ROOT
_open_pipe_ends: set[int] = set()
"""Every pipe end held by a pool in this process, each closed once."""


class ChildProcess:
    """A running system's process and the two pipe ends the parent talks to it through."""

    __slots__ = ("_popen", "_sandboxed", "_status", "from_child", "launched_at", "pid", "to_child")

    def __init__(
        self,
        pid: int,
        to_child: int,
        from_child: int,
        popen: subprocess.Popen[bytes],
        sandboxed: bool = False,
    ) -> None:
        self.pid = pid
        self.to_child = to_child
        self.from_child = from_child
        self._popen = popen
        self._sandboxed = sandboxed
        self._status: int | None = None
        self.launched_at = time.perf_counter()
        """When it was started: a process started before its pool (`_first_process`) took
        that long to start, not the moment its pool adopted it."""

    def poll(self) -> int | None:
        """The exit code (negative: killed by that signal), or None while it runs."""
        if self._status is None:
            self._set_status(self._popen.poll())
        return self._status

    def _set_status(self, code: int | None) -> None:
        # bubblewrap exits with 128 + N when the system died of signal N, as a shell does;
        # a system that exits with such a status itself reads the same.
        if code is not None and self._sandboxed and 128 < code <= 128 + 64:
            code = 128 - code
        self._status = code

    def kill(self) -> None:
        if self.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(self.pid, signal.SIGKILL)

    def wait_briefly(self, timeout: float) -> int | None:
        """The exit code if the process ends within `timeout` seconds, else None."""
        wait_for_exit(self.pid, timeout, lambda: self.poll() is not None)
        return self._status

    def reap(self) -> int:
        """Wait for the process to end (the caller has killed it or closed its pipe)."""
        if self._status is None:
            self._set_status(self._popen.wait())
        assert self._status is not None
        return self._status

    def close_input(self) -> None:
        """Close the pipe the child reads cases from: it finishes and exits."""
        if self.to_child in _open_pipe_ends:
            _open_pipe_ends.discard(self.to_child)
            os.close(self.to_child)

    def close_pipes(self) -> None:
        for fd in (self.to_child, self.from_child):
            if fd in _open_pipe_ends:
                _open_pipe_ends.discard(fd)
                os.close(fd)


def child_setup(memory_limit_mb: int | None, timeout: float | None) -> dict[str, Any]:
    """What every child is told first; a spawned one also gets the system's reference."""
    return {
        "memory_limit_mb": memory_limit_mb,
        "timeout": timeout,
        # "" is the working folder, as the parent resolves it (`python -m`, `-c`, a REPL).
        "sys_path": list(dict.fromkeys(os.path.abspath(entry or ".") for entry in sys.path)),
    }


AdoptedProcess = tuple[ChildProcess, Any]
"""A system's process started before its pool (`_first_process`), with its cgroups."""


def start_child(
    system: System,
    reference: SystemReference | None,
    setup: dict[str, Any],
    environment: Mapping[str, str],
    sandbox: Sandbox | None = None,
    *,
    by_value: str | None = None,
) -> ChildProcess:
    """A process serving `system`, in `sandbox` when given: it imports the system by
    `reference`, or loads it from `by_value` (`_by_value.pickled_system`)."""
    return spawn_child(system_setup(system, reference, setup, by_value), environment, sandbox)


def adopt_child(
    child: ChildProcess,
    system: System,
    reference: SystemReference | None,
    setup: dict[str, Any],
    *,
    by_value: str | None = None,
) -> None:
    """Tell `child`, a process that imported the system already and waits (`_first_process`),
    to serve it as `start_child` would have started one."""
    data = memoryview(frame(system_setup(system, reference, setup, by_value)))
    os.set_blocking(child.to_child, True)
    try:
        with contextlib.suppress(BrokenPipeError):  # a death is read from its pipe's end
            while data:
                data = data[os.write(child.to_child, data) :]
    finally:
        os.set_blocking(child.to_child, False)


def system_setup(
    system: System, reference: SystemReference | None, setup: dict[str, Any], by_value: str | None
) -> dict[str, Any]:
    """`setup` naming the system its process serves: by reference or by value."""
    if reference is not None:
        setup["reference"] = reference.to_dict()
    elif by_value is not None:
        setup["value"] = by_value
    else:
        raise ValueError("a system's process needs the system's reference or its value")
    # The reference (or a pickle made where the system was declared) names the system as
    # declared; a candidate of an optimization is that system reading other texts, which
    # the child binds again.
    setup["components"] = dict(system.components)
    setup["version"] = system.version
    return setup


def spawn_child(
    setup: Mapping[str, Any], environment: Mapping[str, str], sandbox: Sandbox | None = None
) -> ChildProcess:
    """A fresh interpreter that loads the system as `setup` says."""
    env = dict(environment)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [_PACKAGE_ROOT, env.get("PYTHONPATH", "")]))
    wrap = None
    if sandbox is not None:
        cwd, sys_path = os.getcwd(), _shown(setup["sys_path"], setup.get("reference"))

        def wrap(command: list[str]) -> list[str]:
            return sandbox.command(command, cwd=cwd, sys_path=sys_path)

    popen, to_child, from_child = start_serving_process(
        "oloproof_core.execution.isolation._child", env, wrap
    )
    # Written while the pipe still blocks: the child reads the set-up first. A child that
    # died before reading it is reported by its pipe's end of file, as any death.
    with contextlib.suppress(BrokenPipeError):
        os.write(to_child, frame(dict(setup)))
    return register_child(ChildProcess(popen.pid, to_child, from_child, popen, sandbox is not None))


def process_sys_path(system: System) -> list[str]:
    """The folders a process of `system` started now would be shown in its sandbox."""
    from oloproof_core.execution.isolation._by_value import how_system_travels

    reference, _ = how_system_travels(system, "auto")
    setup = child_setup(None, None)
    return _shown(setup["sys_path"], None if reference is None else reference.to_dict())


def _shown(sys_path: list[str], reference: Mapping[str, Any] | None) -> list[str]:
    shown = list(sys_path)
    if reference and reference.get("kind") == "file":  # loaded by path: its folder too
        shown.append(os.path.dirname(reference["target"]))
    return shown


def stop_children(children: list[ChildProcess]) -> None:
    """Stop these processes: ask nicely (close their pipes), then kill what is left."""
    for child in children:
        child.close_input()
    deadline = time.monotonic() + 1.0
    for child in children:
        if child.wait_briefly(max(0.0, deadline - time.monotonic())) is None:
            child.kill()
            # A sandbox still being made may sit in the kernel (a network namespace waits
            # behind the teardown of many others) and die only when that call returns:
            # the pool does not wait for it, so Ctrl-C and the run's end never hang on it.
            if child.wait_briefly(_KILLED_WAIT_S) is None:
                child.close_pipes()
                continue
        child.reap()
        child.close_pipes()


_KILLED_WAIT_S = 2.0


def exit_reason(code: int) -> str:
    """A person's words for how a process ended, from its exit code."""
    if code < 0:
        try:
            name = signal.Signals(-code).name
        except ValueError:
            name = "unknown signal"
        hint = " — killed, e.g. out of memory" if -code == signal.SIGKILL else ""
        return f"died with signal {-code} ({name}{hint})"
    return f"exited with status {code}"


def register_child(child: ChildProcess) -> ChildProcess:
    """Hold `child`'s pipe ends as a pool's: not blocking, each closed once."""
    os.set_blocking(child.to_child, False)
    os.set_blocking(child.from_child, False)
    _open_pipe_ends.update((child.to_child, child.from_child))
    return child
