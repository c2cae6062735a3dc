"""Inside an evaluator's process: load the evaluator once, then judge what is sent.

The pool runs these as a system would be run (`oloproof_core.execution.isolation`): `warm` once
before the first verdict, outside every clock, then `judge_batch` for each message of
verdicts. Each verdict has its own time limit: here an alarm stops the evaluator's code
when it is up (a loop, a sleep, a regular expression that backtracks for ever; an async
evaluator is also cancelled on its event loop), and the run kills the process if the
code holds out against it. A batch stops taking new verdicts once it has run for
`budget` seconds, so the run's deadline for it is one verdict's limit and a little
more, however many it holds; the rest come again in the next batch. Each reply says
whether the process has loaded a model client, so that the run sends one verdict at a
time from then on and can file each one's model calls on its case.
"""

from __future__ import annotations

import json
import signal
import time
import traceback
from types import FrameType
from typing import Any

from oloproof_core.cases.context import enter_case, leave_case
from oloproof_core.errors import UndeclaredReadError
from oloproof_core.judging.contained._travel import Packed, unpack
from oloproof_core.judging.contained._wire import (
    failure_message,
    over_limit_message,
    stand_in,
    undeclared_message,
    verdict_message,
)
from oloproof_core.judging.evaluators import CaseView, Evaluator
from oloproof_core.models._loaded import loads_models

_loaded: dict[int, Evaluator | str] = {}
"""Per packed evaluator: the evaluator, or why it could not be loaded (a traceback)."""

_ASYNC_GRACE_S = 0.5
_loop: Any = None


class _OverLimit(BaseException):
    """Raised in the evaluator's code when its verdict's time is up; a BaseException, so
    that its own `except Exception` does not swallow it."""


class _Alarm:
    """SIGALRM as a verdict's time limit, raising `_OverLimit` in the code it interrupts."""

    armed = False
    installed = False

    @classmethod
    def arm(cls, limit: float | None) -> None:
        if limit is None:
            return
        if not cls.installed:
            signal.signal(signal.SIGALRM, cls._ring)
            cls.installed = True
        cls.armed = True
        signal.setitimer(signal.ITIMER_REAL, limit)

    @classmethod
    def disarm(cls) -> None:
        if cls.armed:
            cls.armed = False
            signal.setitimer(signal.ITIMER_REAL, 0)

    @classmethod
    def _ring(cls, signum: int, frame: FrameType | None) -> None:
        if cls.armed:
            # Again soon, in case the evaluator's code swallows this one.
            signal.setitimer(signal.ITIMER_REAL, 0.05)
            raise _OverLimit


def warm(packed: Packed) -> None:
    """Load the evaluator and its model client before the first verdict is timed."""
    evaluator = _evaluator(packed)
    if isinstance(evaluator, Evaluator) and (evaluator.io_bound or loads_models()):
        from oloproof_core.models import ROLES, prepare

        prepare(ROLES)


def judge_batch(packed: Packed, batch: dict[str, Any]) -> str:
    """Judge the batch's verdicts in order, each within the limit, until the budget is spent."""
    evaluator = _evaluator(packed)
    limit, budget = batch.get("limit"), float(batch.get("budget") or 0.0)
    started = time.perf_counter()
    verdicts: list[list[Any]] = []
    for case_id, parts in batch["items"]:
        if isinstance(evaluator, str):
            verdicts.append(_not_loaded(evaluator))
        else:
            try:
                verdicts.append(_judge(evaluator, case_id, parts, limit))
            except _OverLimit:  # the alarm rang as the verdict was being wrapped up
                _Alarm.disarm()
                verdicts.append(over_limit_message(limit or 0.0))
        if time.perf_counter() - started >= budget:
            break
    # As one text: the pool checks and copies a reply's every part, and a text's in one go.
    return json.dumps({"verdicts": verdicts, "models": loads_models()}, allow_nan=False)


def _judge(evaluator: Evaluator, case_id: str, parts: Any, limit: float | None) -> list[Any]:
    record = stand_in(case_id, parts)
    token = enter_case(record, "evaluator")
    try:
        # No copies: the stand-in is this verdict's alone.
        view = CaseView(record, evaluator.reads, evaluator.criterion, copies=False)
        return _judged(evaluator, view, limit)
    finally:
        _Alarm.disarm()
        leave_case(token)


def _judged(evaluator: Evaluator, view: CaseView, limit: float | None) -> list[Any]:
    try:
        if evaluator.is_async:  # cancelled on its loop at the limit; the alarm, a moment later
            _Alarm.arm(None if limit is None else limit + _ASYNC_GRACE_S)
            message: list[Any] = _runner().run(_awaited(evaluator, view, limit))
            _Alarm.disarm()
            return message
        _Alarm.arm(limit)
        verdict = evaluator.to_verdict(evaluator.judge(view))
        _Alarm.disarm()
        return verdict_message(verdict)
    except _OverLimit:
        _Alarm.disarm()
        if evaluator.is_async:  # its loop was blocked, its task still there: a new loop
            _forget_runner()
        return over_limit_message(limit or 0.0)
    except UndeclaredReadError as exc:
        _Alarm.disarm()
        return undeclared_message(exc)
    except BaseException as exc:  # SystemExit, KeyboardInterrupt: its own, not the run's
        _Alarm.disarm()
        return failure_message(exc)


def _forget_runner() -> None:
    global _loop
    _loop = None


def _runner() -> Any:
    """The process's one event loop, kept across verdicts: an async client made once
    (at import, or on a first verdict) stays bound to a loop that is still open."""
    global _loop
    if _loop is None:
        import asyncio

        _loop = asyncio.Runner()
    return _loop


async def _awaited(evaluator: Evaluator, view: CaseView, limit: float | None) -> list[Any]:
    import asyncio

    clock = asyncio.timeout(limit)
    try:
        async with clock:
            raw = await evaluator.judge(view)
        return verdict_message(evaluator.to_verdict(raw))
    except TimeoutError as exc:
        return over_limit_message(limit or 0.0) if clock.expired() else failure_message(exc)
    except UndeclaredReadError as exc:
        return undeclared_message(exc)
    except asyncio.CancelledError:
        raise
    except BaseException as exc:  # SystemExit, KeyboardInterrupt: its own, not the run's
        return failure_message(exc)


def _not_loaded(failure: str) -> list[Any]:
    lines = failure.strip().splitlines()
    said = lines[-1] if lines else "no message"
    return [
        "error",
        f"IsolationError: the evaluator could not be loaded in its process: {said}",
        failure,
    ]


def _evaluator(packed: Packed) -> Evaluator | str:
    key = id(packed)
    if key not in _loaded:
        try:
            _loaded[key] = unpack(packed)
        except BaseException:  # every verdict then says why
            _loaded[key] = traceback.format_exc()
    return _loaded[key]
