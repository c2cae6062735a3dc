"""The local store's own process: `python -m oloproof._store_server READ_FD WRITE_FD`.

Started by `oloproof._store_process.StoreProcess`, whose docstring describes the wire.
It opens the project's local store, says so, then answers the run's calls until the
run closes its pipe; a run left open then (its process was stopped or killed) is
marked failed.
"""

from __future__ import annotations

import gc
import os
import pickle
import sys
import traceback
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from oloproof._store import _open_local_store
from oloproof._store_process import LEDGER_METHODS, SERVED, StoreProcessError, receive, send
from oloproof_core import OloproofError, fewer_collections

if TYPE_CHECKING:
    from oloproof_core import CaseResult, Result, RunOpening


STORE_SETTINGS = "evalsite.store_settings"
"""oloproof's settings with the recording's apps only, unless the run's environment
names settings of its own (a user's Django project)."""


def serve(read_fd: int, write_fd: int) -> int:
    """Open the local store, say so, then answer calls until the run closes the pipe."""
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", STORE_SETTINGS)
    # The set-up (Django, the models) allocates what this process keeps to its end: the
    # collector is off while it runs, and the calls run under the engine's rarer
    # collections, which freeze what the set-up left (no user code runs here to leave
    # cycles). With the default thresholds the set-up paid about 140 collections
    # (30 ms) and the first call a full one (15 ms).
    gc.disable()
    try:
        served = _Served(_open_local_store())
        from runs.store.data_folder import dashboard_url, dashboard_url_known, store_location

        facts = {
            "location": store_location(),
            "dashboard_url": dashboard_url(),
            "dashboard_known": dashboard_url_known(),
        }
    except Exception as exc:  # the run raises it, as if it had opened the store itself
        return _answer(write_fd, False, _sendable(exc))
    finally:
        gc.freeze()  # before enabling: the first allocation after would collect it all
        gc.enable()
    if _answer(write_fd, True, facts):
        return 0
    with fewer_collections():
        return _answer_calls(served, read_fd, write_fd)


def _answer_calls(served: _Served, read_fd: int, write_fd: int) -> int:
    while True:
        try:
            method, args = receive(read_fd)
        except EOFError:
            served.abandon_open_runs()
            return 0
        reply: tuple[bool, Any]
        if method not in SERVED:
            reply = (False, StoreProcessError(f"no such store call: {method!r}"))
        else:
            try:
                reply = (True, getattr(served, method)(*args))
            except Exception as exc:
                reply = (False, _sendable(exc))
        if _answer(write_fd, *reply):
            served.abandon_open_runs()
            return 0


def _answer(write_fd: int, ok: bool, value: Any) -> int:
    """Send an answer; 1 when the run is gone (it ended before reading it), else 0."""
    try:
        send(write_fd, (ok, value))
    except BrokenPipeError:
        return 1
    return 0


class _Served:
    """The store as this process serves it. The run opens a run without waiting and names
    it (`StoreProcess.run_open`); a run recorded as it goes has its cases' figures kept
    here under that name, batch by batch, for its conclusion (which comes without them)."""

    def __init__(self, store: Any) -> None:
        self._store = store
        self._open: dict[str, tuple[str, list[CaseResult]]] = {}
        """By the name the run gave it: each open run's id and its cases' figures so far."""
        self._ledger: Any = None

    def ledger_call(self, method: str, args: Sequence[Any], kwargs: dict[str, Any]) -> Any:
        """An optimization's ledger, kept here (`oloproof._ledger_process`)."""
        if method not in LEDGER_METHODS:
            raise StoreProcessError(f"no such ledger call: {method!r}")
        if self._ledger is None:
            from runs.workers.optimization_ledger import DjangoLedger

            self._ledger = DjangoLedger()
        return getattr(self._ledger, method)(*args, **kwargs)

    def __getattr__(self, method: str) -> Any:
        return getattr(self._store, method)

    def run_open_as(self, name: str, opening: RunOpening) -> None:
        self._open[name] = (self._store.run_open(opening), [])

    def run_cases_add(self, name: str, cases: Sequence[CaseResult], first_position: int) -> None:
        run_id, kept = self._open[name]
        self._store.run_cases_add(run_id, cases, first_position)
        kept.extend(case.without_payload() for case in cases)

    def run_close(self, name: str, result: Result) -> str:
        run_id, result.cases = self._open.pop(name)
        closed: str = self._store.run_close(run_id, result)
        return closed

    def run_abandon(self, name: str, reason: str) -> None:
        opened = self._open.pop(name, None)
        if opened is not None:  # else it never opened, and its failure was the answer
            self._store.run_abandon(opened[0], reason)

    def abandon_open_runs(self) -> None:
        """Runs the run's process opened and never concluded: it ended (killed, or crashed
        past its own clean-up), so they are marked failed rather than left running."""
        for name in list(self._open):
            self.run_abandon(
                name, "the run's process ended before the run finished (it was stopped or killed)"
            )


def _sendable(exc: Exception) -> Exception:
    """The exception itself, for the run to raise as its own; anything but oloproof's own
    errors carries this process's traceback as a note, for a bug report."""
    if not isinstance(exc, OloproofError):
        text = "".join(traceback.format_exception(exc)).rstrip()
        exc.add_note(f"(raised in the local store's own process)\n{text}")
    try:
        pickle.loads(pickle.dumps(exc))
    except Exception:
        return StoreProcessError(f"the local store failed: {type(exc).__name__}: {exc}")
    return exc


if __name__ == "__main__":
    from oloproof_core import end_process

    end_process(serve(int(sys.argv[1]), int(sys.argv[2])), user_code=False)
