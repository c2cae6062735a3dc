"""Inside a system's process: receive cases, call the system, send back what it produced.

A case whose input carries files gets a workspace of its own (`cases.workspace`): made
and seeded before the call, the working directory during it, packed into the reply and
removed after it.

The child times nothing: the parent measures each call from sending the case to
receiving the reply. What travels back is only what the system produced — its
output, the artifacts it attached, the steps it added to its transcript and the model
calls the model client saw — and
the parent checks all of it again. The case record here is a stand-in built from
the id and input alone, so `expected` is not in this process at all.
"""

from __future__ import annotations

import dataclasses
import os
import traceback
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from oloproof_core.cases.case import CaseResult, not_json_error
from oloproof_core.cases.context import enter_case, leave_case
from oloproof_core.cases.transcript import system_steps_for_parent
from oloproof_core.cases.workspace import CaseWorkspace
from oloproof_core.execution.isolation._bindings import BoundReleases
from oloproof_core.execution.isolation._protocol import FrameReader, frame
from oloproof_core.execution.isolation._spin import SoonReader
from oloproof_core.execution.systems import System

if TYPE_CHECKING:
    import asyncio

_READ_SIZE = 1 << 16


def serve_sync(system: System, read_fd: int, write_fd: int, memory_limit_mb: int | None) -> None:
    """One case at a time until the parent closes the pipe."""
    reader = FrameReader()
    releases = BoundReleases(system)
    pipe = SoonReader(read_fd)
    while data := pipe.read(_READ_SIZE):
        for message in reader.feed(data):
            if isinstance(message, dict):  # between cases: bind another release's texts
                _write_all(write_fd, releases.bind(message))
                continue
            seq, case_id, case_input, fn = releases.case(message)
            record = CaseResult(id=case_id, input=case_input, expected=None)
            _write_all(write_fd, _served(seq, record, fn, memory_limit_mb))


def _served(
    seq: int, record: CaseResult, fn: Callable[[Any], Any], memory_limit_mb: int | None
) -> bytes:
    """One case of a sync system: its workspace made, the call, its workspace packed and gone."""
    try:
        workspace = CaseWorkspace.open(record.input)
    except Exception as exc:  # a path leaving the workspace, a /tmp that is full
        return _error_reply(seq, record, exc, memory_limit_mb)
    token = enter_case(record, "system", None if workspace is None else workspace.path)
    failure: Exception | None = None
    try:
        if workspace is not None:
            workspace.enter()
        output = fn(record.input)
    except Exception as exc:
        failure = exc
    finally:
        leave_case(token)
    packed = _finished(workspace)  # a missing case is not judged: its files are not sent
    if failure is not None:
        return _error_reply(seq, record, failure, memory_limit_mb)
    return _reply(seq, record, output, packed)


def _finished(workspace: CaseWorkspace | None) -> dict[str, Any] | None:
    """The workspace packed for the evaluators, its folder removed."""
    if workspace is None:
        return None
    try:
        return workspace.finish()
    except Exception as exc:  # the folder went missing or its /tmp is full
        return {"files": [], "bytes": 0, "left_out": [f"the workspace could not be packed: {exc}"]}


def serve_async(
    system: System, read_fd: int, write_fd: int, memory_limit_mb: int | None, timeout: float | None
) -> None:
    """Every case the parent sends runs as its own task on this process's one event loop."""
    import asyncio  # here: a sync system's process never loads it

    asyncio.run(_serve_async(system, read_fd, write_fd, memory_limit_mb, timeout))


async def _serve_async(
    system: System, read_fd: int, write_fd: int, memory_limit_mb: int | None, timeout: float | None
) -> None:
    import asyncio

    loop = asyncio.get_running_loop()
    reader = FrameReader()
    closed = loop.create_future()
    tasks: set[asyncio.Task[None]] = set()
    releases = BoundReleases(system)

    async def run(seq: int, case_id: str, case_input: Any, fn: Callable[[Any], Any]) -> None:
        record = CaseResult(id=case_id, input=case_input, expected=None)
        # One working directory a process: the workspace is it only for a case alone here.
        alone = len(tasks) == 1
        _write_all(write_fd, await _served_async(seq, record, fn, timeout, memory_limit_mb, alone))

    def readable() -> None:
        data = os.read(read_fd, _READ_SIZE)
        if not data:
            loop.remove_reader(read_fd)
            closed.set_result(None)
            return
        for message in reader.feed(data):
            if isinstance(message, dict):  # no case of this process is in flight then
                _write_all(write_fd, releases.bind(message))
                continue
            task = loop.create_task(run(*releases.case(message)))
            tasks.add(task)
            task.add_done_callback(tasks.discard)

    loop.add_reader(read_fd, readable)
    await closed
    for task in list(tasks):
        task.cancel()


async def _served_async(
    seq: int,
    record: CaseResult,
    fn: Callable[[Any], Any],
    timeout: float | None,
    memory_limit_mb: int | None,
    alone: bool,
) -> bytes:
    """One case of an async system, with its workspace as a sync case has it."""
    import asyncio

    try:
        workspace = CaseWorkspace.open(record.input)
    except Exception as exc:
        return _error_reply(seq, record, exc, memory_limit_mb)
    token = enter_case(record, "system", None if workspace is None else workspace.path)
    try:
        if workspace is not None and alone:
            workspace.enter()
        output = await asyncio.wait_for(fn(record.input), timeout)
    except TimeoutError:
        _finished(workspace)
        return frame([seq, "timeout", None, {}, []])
    except Exception as exc:
        _finished(workspace)
        return _error_reply(seq, record, exc, memory_limit_mb)
    finally:
        leave_case(token)
    return _reply(seq, record, output, _finished(workspace))


def _reply(
    seq: int, record: CaseResult, output: Any, workspace: dict[str, Any] | None = None
) -> bytes:
    calls = [dataclasses.asdict(call) for call in record.measurements.model_calls]
    steps = _own_steps(record)
    try:
        return frame([seq, "ok", output, record.artifacts, calls, steps, workspace])
    except (TypeError, ValueError, RecursionError) as exc:
        error = not_json_error(output, exc)
        payload = [error.type, error.message, ""]
        return frame([seq, "error", payload, record.artifacts, calls, steps, workspace])


def _own_steps(record: CaseResult) -> dict[str, Any] | None:
    """The steps the system added itself (`current_case().step`), for the parent's transcript."""
    return system_steps_for_parent(record.trace)


def _error_reply(
    seq: int, record: CaseResult, exc: Exception, memory_limit_mb: int | None
) -> bytes:
    message = str(exc)
    if isinstance(exc, MemoryError) and memory_limit_mb is not None:
        message = (
            f"the system ran out of memory: its process may use {memory_limit_mb} MiB "
            "(raise it with memory_limit_mb=...)" + (f"; {message}" if message else "")
        )
    payload = [type(exc).__name__, message, "".join(traceback.format_exception(exc))]
    calls = [dataclasses.asdict(call) for call in record.measurements.model_calls]
    try:
        return frame([seq, "error", payload, record.artifacts, calls, _own_steps(record)])
    except (TypeError, ValueError, RecursionError):
        return frame([seq, "error", payload, {}, []])


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]
