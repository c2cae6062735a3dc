"""Starting the probe: one sandboxed process that imports a run config's code and declares it.

The probe runs in the sandbox the run's system will run in (the same mode, the same hidden
paths, the same caps, the environment a system's process gets, no network), so the
top-level code of a system module, an evaluator module or a metric file runs there and
nowhere else. It has `PROBE_TIMEOUT_S` to answer; one that hangs, dies or answers
nonsense fails the config with the reason.
"""

from __future__ import annotations

import contextlib
import os
import time
import warnings
from collections.abc import Mapping, Sequence
from typing import Any

from oloproof_core._util.serving_process import start_serving_process
from oloproof_core.errors import ConfigError
from oloproof_core.execution.isolation import DEFAULT_MEMORY_LIMIT_MB, UnprotectedRunWarning
from oloproof_core.execution.isolation._env import child_environment
from oloproof_core.execution.isolation._first_process import FirstProcess
from oloproof_core.execution.isolation._process import (
    _PACKAGE_ROOT,
    ChildProcess,
    child_setup,
    exit_reason,
    register_child,
)
from oloproof_core.execution.isolation._protocol import FrameReader, ProtocolError, frame
from oloproof_core.execution.isolation._sandbox_choice import SandboxChoice

PROBE_TIMEOUT_S = float(os.environ.get("OLOPROOF_PROBE_TIMEOUT_S", "120"))
"""How long a run config's code may take to import (a model loaded at import counts)."""

_REPLY_LIMIT = 64 * 1024 * 1024
_MODULE = "oloproof_core.configs.code._in_probe"


def probe(
    request: Mapping[str, Any],
    *,
    sandbox: str,
    hidden: Sequence[str],
    folders: Sequence[str],
    memory_limit_mb: int | None,
) -> dict[str, Any]:
    """The probe's reply to `request` (see `_in_probe`), or a ConfigError saying why none
    came. `folders`: the code's folders, shown to the sandbox read-only."""
    with warnings.catch_warnings():  # said once for the run, by its system's pool
        warnings.simplefilter("ignore", UnprotectedRunWarning)
        choice = SandboxChoice.choose(sandbox, hidden=hidden)
    try:
        limit = memory_limit_mb or DEFAULT_MEMORY_LIMIT_MB
        setup = {**child_setup(limit, None), **request, "sandboxed": choice.sandbox is not None}
        setup["sys_path"] = [*setup["sys_path"], *folders]
        return _ask(setup, choice, limit)
    finally:
        choice.close()


_NO_GATEWAY = "http://127.0.0.1:9/v1"
"""Where the probe's model variables point: nowhere. Module-level code that reads them
(to make a client) finds them as in the system's processes; a call it makes at import
fails, so nothing is spent outside the meter."""


def _ask(setup: dict[str, Any], choice: SandboxChoice, limit_mb: int) -> dict[str, Any]:
    environment = child_environment(
        {
            "OPENAI_BASE_URL": _NO_GATEWAY,
            "OPENAI_API_KEY": "no-key-while-imported",
            "OLOPROOF_SYSTEM_BASE_URL": _NO_GATEWAY,
            "OLOPROOF_SYSTEM_API_KEY": "no-key-while-imported",
        }
    )
    sandbox = choice.sandbox
    if sandbox is not None:
        sandbox.memory_limit_mb = limit_mb
    popen, to_it, from_it = _start(setup, environment, choice)
    cgroups = sandbox.claim() if sandbox is not None else None
    try:
        reply = _read_reply(from_it)
    finally:
        for fd in (to_it, from_it):
            os.close(fd)
        if popen.poll() is None:
            popen.kill()
        code = popen.wait()
        if sandbox is not None:
            sandbox.release(cgroups)
    if reply is None:
        raise _died(code)
    return reply


def start_first_process(
    request: Mapping[str, Any], first: FirstProcess, *, folders: Sequence[str]
) -> None:
    """Start the probe of the system alone as `first`, the process its pool may adopt:
    in the pool's sandbox, with the pool's environment for its process 0. It declares
    the system, then waits to serve (`first_process_reply`)."""
    setup = {**child_setup(first.memory_limit_mb, None), **request, "then_serve": True}
    setup["sandboxed"] = first.sandboxed
    setup["sys_path"] = [*setup["sys_path"], *folders]
    popen, to_it, from_it = _start(setup, child_environment(first.environment()), first.choice)
    first.started(
        register_child(ChildProcess(popen.pid, to_it, from_it, popen, first.sandboxed)),
        setup["sys_path"],
    )


def first_process_reply(first: FirstProcess) -> dict[str, Any]:
    """The declaration `first` sent, or a ConfigError saying why none came (then it is
    stopped)."""
    child = first.child
    assert child is not None
    try:
        reply = _read_reply(child.from_child)
    except BaseException:
        first.close()
        raise
    if reply is None:
        first.close()
        raise _died(child.reap())
    return reply


def _start(
    setup: Mapping[str, Any], environment: dict[str, str], choice: SandboxChoice
) -> tuple[Any, int, int]:
    environment["PYTHONPATH"] = os.pathsep.join(
        filter(None, [_PACKAGE_ROOT, environment.get("PYTHONPATH", "")])
    )
    sandbox = choice.sandbox
    wrap = None
    if sandbox is not None:

        def wrap(command: list[str]) -> list[str]:
            return sandbox.command(command, cwd=os.getcwd(), sys_path=setup["sys_path"])

    popen, to_it, from_it = start_serving_process(_MODULE, environment, wrap)
    with contextlib.suppress(BrokenPipeError):
        os.write(to_it, frame(setup))
    return popen, to_it, from_it


def _died(code: int) -> ConfigError:
    return ConfigError(
        "the run's code could not be read in its sandbox: its process "
        f"{exit_reason(code)} before it answered"
    )


def _read_reply(from_it: int) -> dict[str, Any] | None:
    import select

    reader = FrameReader(limit=_REPLY_LIMIT)
    deadline = time.monotonic() + PROBE_TIMEOUT_S
    while (left := deadline - time.monotonic()) > 0:
        ready, _, _ = select.select([from_it], [], [], left)
        if not ready:
            break
        data = os.read(from_it, 1 << 16)
        if not data:
            return None
        try:
            messages = reader.feed(data)
        except ProtocolError as exc:
            raise ConfigError(f"the run's code sent a malformed declaration: {exc}") from None
        if messages:
            if not isinstance(messages[0], dict):
                raise ConfigError("the run's code sent a malformed declaration")
            return messages[0]
    raise ConfigError(
        f"importing the run's code took longer than {PROBE_TIMEOUT_S:g} s (its module-level "
        "code runs when it is imported: move slow work into the system, or into its "
        "warmup= hook; OLOPROOF_PROBE_TIMEOUT_S sets the limit)"
    )
