"""The project's local store, served by a process of its own.

Opening the local store means setting Django up and checking the schema: a fifth of a
second of imports that, in the run's own process, sits between the last case and the
first verdict. In a process of its own that work happens beside the run, on another
core, while the run loads its dataset and its system answers. The run talks to it
through the engine's `Store` protocol and never imports Django itself.

The wire: an 8-byte length, then a pickle. Both ends are this package (a system's code
never runs in either), so pickle carries the engine's objects as they are. The run sends
`(method, args)`; the store answers `(True, value)` or `(False, exception)`. Its first
message says it opened, with where it records and the dashboard's address, or why it
could not (an exception, raised in the run at its first use of the store).
"""

from __future__ import annotations

import contextlib
import os
import pickle
import queue
import struct
import sys
import threading
from collections.abc import Collection, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from oloproof_core import OloproofError, start_serving_process, wait_for_exit

if TYPE_CHECKING:
    from oloproof_core import CacheEntry, CaseResult, Earlier, Result, RunOpening, Verdict

_SERVER = "oloproof._store_server"
_HEADER = struct.Struct("!Q")
MOST_AHEAD = 8
"""Calls a run may send ahead before it waits for the store to answer the oldest. Their
answers come back on a pipe the run reads at its next call, which a run whose verdicts
all come from its own memory may not make for thousands of batches: unread, they would
fill that pipe and stall both ends. This also bounds the batches waiting in memory."""
_CLOSING_SECONDS = 30.0
"""How long a closing run waits for the store's process to mark its unfinished runs."""
SERVED = frozenset(
    {
        "get_verdicts",
        "put_verdicts",
        "record_run",
        "find_baseline",
        "earlier_tries",
        "load_run",
        "run_open_as",
        "run_cases_add",
        "run_close",
        "run_abandon",
        "ledger_call",
    }
)
LEDGER_METHODS = frozenset(
    {
        "optimization_begin",
        "optimization_state",
        "optimization_progress",
        "optimization_conclude",
        "evaluations",
        "evaluations_add",
        "reflections",
        "reflection_add",
        "candidates",
        "candidate_add",
    }
)
"""The `Ledger` methods the store's process answers (`oloproof._ledger_process`)."""


class StoreProcessError(OloproofError):
    """The store's process ended or broke the protocol; its own messages are on stderr."""


def send(fd: int, message: Any) -> None:
    _write_all(fd, encode(message))


def encode(message: Any) -> bytes:
    data = pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL)
    return _HEADER.pack(len(data)) + data


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def receive(fd: int) -> Any:
    """The next message, or EOFError when the other end closed its pipe."""
    (size,) = _HEADER.unpack(_read_exactly(fd, _HEADER.size))
    return pickle.loads(_read_exactly(fd, size))


class PipeWriter:
    """Writes messages to a pipe in order, on a thread of its own, so the run goes on
    while the store is busy: a batch of cases is more than a pipe holds, and the store
    reads it only once it has written the batch before. `broken` says a write failed
    (the store's process ended); what was still waiting is dropped."""

    def __init__(self, fd: int) -> None:
        self._fd = fd
        self._waiting: queue.SimpleQueue[bytes | None] = queue.SimpleQueue()
        self._thread: threading.Thread | None = None
        self.broken = False

    def write(self, data: bytes) -> None:
        if self._thread is None:
            self._thread = threading.Thread(
                target=self._write_in_turn, name="oloproof-store-writer", daemon=True
            )
            self._thread.start()
        self._waiting.put(data)

    def finish(self, timeout: float) -> None:
        """Write what is waiting (for at most `timeout` seconds) and end the thread."""
        if self._thread is not None:
            self._waiting.put(None)
            self._thread.join(timeout)

    def _write_in_turn(self) -> None:
        while (data := self._waiting.get()) is not None:
            if self.broken:
                continue
            try:
                _write_all(self._fd, data)
            except OSError:
                self.broken = True


def _read_exactly(fd: int, size: int) -> bytes:
    parts: list[bytes] = []
    missing = size
    while missing:
        part = os.read(fd, min(missing, 1 << 22))
        if not part:
            raise EOFError
        parts.append(part)
        missing -= len(part)
    return b"".join(parts)


class StoreProcess:
    """The engine's `Store`, kept by the project's Django store in a process of its own.

    Started at once; every call waits for the store to be open, so the first one also
    raises what kept it from opening (a database that needs migrating, say).
    """

    def __init__(self) -> None:
        environment = dict(os.environ)
        # The run may have put a config's folder on sys.path; the objects it sends name
        # only this package's classes, but a user's artifact may name one of theirs.
        environment["PYTHONPATH"] = os.pathsep.join(entry for entry in sys.path if entry)
        # Ctrl-C is the run's to handle: it abandons its open run through this store,
        # then closes the pipe, which ends the store's process.
        self._popen, self._to_server, self._from_server = start_serving_process(
            _SERVER, environment
        )
        self._writer = PipeWriter(self._to_server)
        self._facts: dict[str, str] | None = None
        self._unanswered = 0
        self._openings = 0
        # One call at a time on the pipe, whichever thread makes it.
        self._lock = threading.Lock()
        self._owner = os.getpid()

    def _opened(self) -> dict[str, str]:
        if self._facts is None:
            opened, facts = self._reply()
            if not opened:
                self.close()
                raise facts
            self._facts = facts
        return self._facts

    def _reply(self) -> tuple[bool, Any]:
        try:
            reply: tuple[bool, Any] = receive(self._from_server)
        except EOFError:
            code = self._popen.wait()
            raise StoreProcessError(
                f"the local store's process ended (exit code {code}) before it answered; "
                "its messages are above"
            ) from None
        return reply

    def _call(self, method: str, *args: Any) -> Any:
        with self._lock:
            self._opened()  # its answer comes first on the pipe
            self._send(method, args)
            earlier: BaseException | None = None
            while self._unanswered:  # the calls sent ahead answer first, in order
                self._unanswered -= 1
                ok, value = self._reply()
                if not ok and earlier is None:
                    earlier = value
            ok, value = self._reply()
        if earlier is not None:
            raise earlier
        if not ok:
            raise value
        return value

    def _send_ahead(self, method: str, *args: Any) -> None:
        """Send a call and go on, even before the store has opened: its answer is read (and
        a failure raised) at the next call, or once `MOST_AHEAD` calls wait for theirs, so
        the store works while the run goes on."""
        with self._lock:
            self._send(method, args)
            self._unanswered += 1
            if self._unanswered > MOST_AHEAD:
                self._opened()  # its answer comes first on the pipe
                self._unanswered -= 1
                ok, value = self._reply()
                if not ok:
                    raise value

    def _send(self, method: str, args: tuple[Any, ...]) -> None:
        # Pickled here and now: the cases may change once the call returns.
        message = encode((method, args))
        if not self._writer.broken:
            self._writer.write(message)
        else:
            self._opened()  # the store could not open: that is the reason to give
            code = self._popen.wait()
            raise StoreProcessError(
                f"the local store's process ended (exit code {code}); its messages are above"
            ) from None

    def prepare(self) -> None:
        """Nothing to wait for here: the store opens in its own process meanwhile."""

    def get_verdicts(self, keys: Collection[str]) -> Mapping[str, Verdict]:
        verdicts: Mapping[str, Verdict] = self._call("get_verdicts", list(keys))
        return verdicts

    def put_verdicts(self, entries: Sequence[CacheEntry]) -> None:
        # Sent ahead: the run's later batches take these verdicts from its own memory,
        # and a run's next call comes after them on the pipe.
        self._send_ahead("put_verdicts", list(entries))

    def record_run(self, result: Result) -> str | None:
        run_id: str | None = self._call("record_run", result)
        return run_id

    def find_baseline(self, system_name: str, release: str | None) -> Result | None:
        baseline: Result | None = self._call("find_baseline", system_name, release)
        return baseline

    def earlier_tries(self, cases_digest: str, system_name: str, source: str) -> Earlier:
        """As `DjangoStore.earlier_tries`, for `repeats: auto`."""
        earlier: Earlier = self._call("earlier_tries", cases_digest, system_name, source)
        return earlier

    def load_run(self, run_id: str) -> Result:
        """A recorded run by its id (as `DjangoStore.load_run`), for baselines."""
        result: Result = self._call("load_run", run_id)
        return result

    def run_open(self, opening: RunOpening) -> str:
        """Open the run without waiting for it: the store's process knows it by the name
        returned here (`run_close` returns its id), and a failure to open it is raised at
        the next call, as any call sent ahead."""
        self._openings += 1
        name = f"opening-{self._openings}"
        self._send_ahead("run_open_as", name, opening)
        return name

    def run_cases_add(self, run_id: str, cases: Sequence[CaseResult], first_position: int) -> None:
        self._send_ahead("run_cases_add", run_id, list(cases), first_position)

    def run_close(self, run_id: str, result: Result) -> str:
        # The store kept the cases' figures as the batches came; the conclusion goes
        # without them rather than pickling every case a second time.
        import dataclasses  # not at the top: this module loads before anything else

        closed: str = self._call("run_close", run_id, dataclasses.replace(result, cases=[]))
        return closed

    def run_abandon(self, run_id: str, reason: str) -> None:
        self._call("run_abandon", run_id, reason)

    def ledger_call(self, method: str, *args: Any, **kwargs: Any) -> Any:
        """One `Ledger` method of an optimization's, answered by `DjangoLedger` there."""
        return self._call("ledger_call", method, args, kwargs)

    def location(self) -> str:
        """Where the store records runs, in words (as `runs.store.data_folder.store_location`)."""
        return self._opened()["location"]

    def dashboard_url(self) -> str:
        return self._opened()["dashboard_url"]

    def dashboard_known(self) -> bool:
        """Whether that address is known rather than the default guessed."""
        return bool(self._opened()["dashboard_known"])

    def close(self) -> None:
        """Close the pipes and wait for the store's process to end: every call has been
        answered, so it only marks a run left open as failed (a run that never got to
        its conclusion) and exits; one never used is stopped at once. Waiting also
        counts its time with this process's."""
        self._writer.finish(_CLOSING_SECONDS)
        for fd in (self._to_server, self._from_server):
            with contextlib.suppress(OSError):
                os.close(fd)
        self._to_server = self._from_server = -1
        if os.getpid() != self._owner:  # a forked copy of this process: not its to end
            return
        if self._facts is None:  # never used: no need to let it finish opening
            self._popen.kill()
        if not wait_for_exit(self._popen.pid, _CLOSING_SECONDS, self._ended):
            self._popen.kill()
            self._popen.wait()

    def _ended(self) -> bool:
        return self._popen.poll() is not None

    def __repr__(self) -> str:
        return f"<StoreProcess pid={self._popen.pid}>"
