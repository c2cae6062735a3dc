"""A system's process: set itself up, import and warm the system, then serve cases.

Started by the pool as `python -m oloproof_core.execution.isolation._child READ_FD WRITE_FD` with
a scrubbed environment, inside the sandbox where there is one: die with the parent,
keep the parent's stdout clean, take the memory cap, load the system (by reference or
by value), warm it, then announce readiness. A system that cannot be loaded says so
with `{"failed": ..., "loading": true}`: the run fails before its first case.
"""

from __future__ import annotations

import os
import signal
import sys
import traceback
from collections.abc import Mapping
from typing import Any

from oloproof_core.execution.isolation._protocol import FrameReader, frame
from oloproof_core.execution.isolation._serve import serve_async, serve_sync
from oloproof_core.execution.systems import System
from oloproof_core.models._loaded import loads_models

_PR_SET_PDEATHSIG = 1


def main(argv: list[str]) -> int:
    read_fd, write_fd = int(argv[1]), int(argv[2])
    parent = os.getppid()
    _prepare_process(parent)
    setup = _read_setup(read_fd)
    if setup is None:
        return 0
    return serve_from_setup(setup, read_fd, write_fd)


def serve_from_setup(setup: Mapping[str, Any], read_fd: int, write_fd: int) -> int:
    """Load and warm the system `setup` names, say so, then serve cases until the pipe
    closes. A system's first process comes here after its probe (`configs.code`), with
    the system's module already imported there."""
    loading = False
    try:
        from oloproof_core.execution.isolation._relay import relay_gateway

        relay_gateway()
        _apply_setup(setup)
        loading = True
        system = _load_system(setup)
        loading = False
        models = _warm(system)
    except BaseException:
        # A system that cannot be loaded fails the run; one whose warm-up failed is tried
        # again in a new process.
        os.write(write_fd, frame({"failed": traceback.format_exc(), "loading": loading}))
        return 1
    return serve(system, read_fd, write_fd, setup, models=models)


def _load_system(setup: Mapping[str, Any]) -> System:
    if "value" in setup:
        from oloproof_core.execution.isolation._by_value import load_pickled
        from oloproof_core.execution.systems import as_system

        system = as_system(load_pickled(setup["value"]))
    else:
        from oloproof_core.execution.isolation._reference import SystemReference, load_reference

        system = load_reference(SystemReference.from_dict(setup["reference"]))
    texts, version = setup.get("components") or {}, setup.get("version")
    if texts and (texts != system.components or version != system.version):
        system = system.with_components(texts, version=version)
    return system


def serve(
    system: System, read_fd: int, write_fd: int, setup: Mapping[str, Any], *, models: bool
) -> int:
    """Say the process is ready (and whether it loaded a model client), then serve cases."""
    os.write(write_fd, frame({"ready": {"pid": os.getpid(), "models": models}}))
    limit = setup.get("memory_limit_mb")
    if system.is_async:
        serve_async(system, read_fd, write_fd, limit, setup.get("timeout"))
    else:
        serve_sync(system, read_fd, write_fd, limit)
    return 0


def _prepare_process(parent: int) -> None:
    # Ctrl-C reaches the whole process group; the parent decides and then stops us.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    _die_with_parent(parent)
    # Whatever the system prints must not mix into the parent's stdout (`--json -`).
    sys.stdout.flush()
    os.dup2(2, 1)
    sys.stdout = sys.stderr


def _die_with_parent(parent: int) -> None:
    """A child stuck in a system call must not outlive a parent that was killed."""
    if sys.platform.startswith("linux"):
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    if os.getppid() != parent:  # the parent died before the request took effect
        os._exit(1)


def _read_setup(read_fd: int) -> Any:
    reader = FrameReader()
    while data := os.read(read_fd, 1 << 16):
        messages = reader.feed(data)
        if messages:
            return messages[0]
    return None


def _apply_setup(setup: Mapping[str, Any]) -> None:
    _set_memory_limit(setup.get("memory_limit_mb"))
    for entry in reversed(setup.get("sys_path", [])):
        if entry not in sys.path:
            sys.path.insert(0, entry)


def _set_memory_limit(limit_mb: int | None) -> None:
    if limit_mb is None:
        return
    import resource

    limit = int(limit_mb) * 1024 * 1024
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))


def _warm(system: System) -> bool:
    """Prepare the system for its first case; True when it loaded a model client."""
    prepare_model_client()
    warmup = getattr(system, "warmup", None)
    if warmup is not None:
        warmup()
    return loads_models()


def prepare_model_client() -> None:
    """Do the model client's one-off work before any timing."""
    if loads_models():
        from oloproof_core.models import prepare

        prepare(("system",))


if __name__ == "__main__":
    # The pool waits for this process to end: without the interpreter's teardown it
    # ends in a millisecond, the system's own exit work (atexit, open files) done.
    from oloproof_core._util.process_exit import end_process

    end_process(main(sys.argv))
