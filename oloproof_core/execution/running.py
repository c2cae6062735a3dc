"""Running a system over cases: concurrently, measured, with failures kept as missing cases.

Async systems run on one event loop with `concurrency` worker tasks; sync systems
run in a bounded pool of `concurrency` threads that pull cases one at a time, so a
slow case holds up only its own thread. The engine measures wall time around the
call itself; nothing the system does can change the figure it records.
"""

from __future__ import annotations

import copy
import itertools
import json
import threading
import time
import traceback
from collections.abc import Callable, Sequence
from typing import Any

from oloproof_core._util.canonical import canonical_json
from oloproof_core._util.limits import value_problem
from oloproof_core.cases.case import CaseError, CaseResult, not_json_error
from oloproof_core.cases.context import enter_case, leave_case
from oloproof_core.execution.systems import System

ProgressCallback = Callable[[str, int, int], None]
"""Called as progress(phase, done, total) while a run advances."""

DEFAULT_CONCURRENCY = 16
_PROGRESS_INTERVAL_S = 0.2


def run_system(
    system: System,
    cases: Sequence[CaseResult],
    *,
    concurrency: int,
    timeout: float | None,
    progress: ProgressCallback | None = None,
) -> None:
    """Fill every case's output (or error) and latency, in place."""
    if concurrency < 1:
        raise ValueError(f"concurrency must be at least 1, got {concurrency}")
    if system.is_async:
        _run_coroutine(_run_async(system, cases, concurrency, timeout, progress))
    else:
        _run_threads(system, cases, concurrency, timeout, progress)
    if progress is not None:
        progress("system", len(cases), len(cases))


def error_from(exc: BaseException) -> CaseError:
    return CaseError(
        type=type(exc).__name__,
        message=str(exc),
        traceback="".join(traceback.format_exception(exc)),
    )


def keep_output(record: CaseResult, output: Any) -> None:
    """Keep the output with its canonical text, or make the case missing if it is not JSON
    data every database can store (NUL, lone surrogates, NaN, too deep...)."""
    problem = value_problem(output, "output")
    if problem is not None:
        record.error = not_json_error(output, problem)
        return
    try:
        text = canonical_json(output)
    except (TypeError, ValueError, RecursionError) as exc:
        record.error = not_json_error(output, exc)
        return
    # The recorded value is a copy: the system cannot change it after returning it.
    record.output_json = text
    record.output = json.loads(text)


def timed_out(record: CaseResult, timeout: float) -> None:
    """Make the case missing because its call ran past the per-case timeout."""
    record.output = None
    record.output_json = None
    record.error = CaseError(
        type="TimeoutError",
        message=f"the system took longer than the {timeout:g} s per-case timeout "
        "(raise it with timeout=...)",
    )


def _call_sync(system: System, record: CaseResult, timeout: float | None) -> None:
    token = enter_case(record, "system")
    started = time.perf_counter()
    try:
        output = system.fn(copy.deepcopy(record.input))
    except (Exception, SystemExit, KeyboardInterrupt) as exc:
        # SystemExit in a system's thread is its failure (a missing case), not the run's.
        elapsed = time.perf_counter() - started
        record.error = error_from(exc)
    else:
        elapsed = time.perf_counter() - started
        keep_output(record, output)
    finally:
        leave_case(token)
    record.measurements.latency_ms = elapsed * 1000.0
    # A thread cannot be interrupted, so a sync system's timeout is enforced after the
    # fact: the late output is discarded rather than trusted.
    if timeout is not None and elapsed > timeout:
        timed_out(record, timeout)


def _run_threads(
    system: System,
    cases: Sequence[CaseResult],
    concurrency: int,
    timeout: float | None,
    progress: ProgressCallback | None,
) -> None:
    total = len(cases)
    workers = min(concurrency, total)
    if workers <= 1:
        last_report = time.monotonic()
        for done, record in enumerate(cases):
            _call_sync(system, record, timeout)
            if progress is not None and time.monotonic() - last_report > _PROGRESS_INTERVAL_S:
                progress("system", done + 1, total)
                last_report = time.monotonic()
        return
    claim = itertools.count()  # next() on a count is atomic under the GIL
    done_per_worker = [0] * workers

    def work(slot: int) -> None:
        while (index := next(claim)) < total:
            _call_sync(system, cases[index], timeout)
            done_per_worker[slot] += 1

    threads = [
        threading.Thread(target=work, args=(slot,), daemon=True, name=f"oloproof-system-{slot}")
        for slot in range(workers)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        while thread.is_alive():
            thread.join(_PROGRESS_INTERVAL_S)
            if progress is not None:
                progress("system", sum(done_per_worker), total)


async def _call_async(system: System, record: CaseResult, timeout: float | None) -> None:
    import asyncio  # loaded by then: this runs on its event loop

    token = enter_case(record, "system")
    started = time.perf_counter()
    try:
        output = await asyncio.wait_for(system.fn(copy.deepcopy(record.input)), timeout)
    except TimeoutError:
        record.measurements.latency_ms = (time.perf_counter() - started) * 1000.0
        timed_out(record, timeout or 0.0)
        return
    except (Exception, SystemExit) as exc:
        record.error = error_from(exc)
    else:
        keep_output(record, output)
    finally:
        leave_case(token)
    record.measurements.latency_ms = (time.perf_counter() - started) * 1000.0


async def _run_async(
    system: System,
    cases: Sequence[CaseResult],
    concurrency: int,
    timeout: float | None,
    progress: ProgressCallback | None,
) -> None:
    import asyncio

    pending = iter(cases)
    done = 0
    last_report = time.monotonic()

    async def work() -> None:
        nonlocal done, last_report
        for record in pending:  # one event loop thread: sharing the iterator is safe
            await _call_async(system, record, timeout)
            done += 1
            if progress is not None and time.monotonic() - last_report > _PROGRESS_INTERVAL_S:
                progress("system", done, len(cases))
                last_report = time.monotonic()

    await asyncio.gather(*(work() for _ in range(min(concurrency, len(cases)))))


def _run_coroutine(coroutine: Any) -> None:
    """Run on a fresh event loop, in a helper thread when one is already running (notebooks)."""
    import asyncio  # here: a run of a sync system never loads it

    try:
        asyncio.get_running_loop()
    except RuntimeError:
        asyncio.run(coroutine)
        return
    failure: list[BaseException] = []

    def runner() -> None:
        try:
            asyncio.run(coroutine)
        except BaseException as exc:
            failure.append(exc)

    thread = threading.Thread(target=runner, name="oloproof-event-loop")
    thread.start()
    thread.join()
    if failure:
        raise failure[0]
