"""`current_case()`: the case being processed, for code running inside a system or evaluator.

The engine sets a context variable around every system call and every evaluator
call, so it follows threads and asyncio tasks without being passed around. Inside
a system the case's `expected` is not reachable: the system must never see it.
The measurements (wall time, model cost) live on the engine's side of this object
and code under test can only read them.
"""

from __future__ import annotations

from collections.abc import Mapping
from contextvars import ContextVar
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Literal

from oloproof_core._util.canonical import canonical_json
from oloproof_core.cases.observations import ModelCall, Observation
from oloproof_core.cases.transcript import Transcript, checked_step_data, checked_step_name
from oloproof_core.errors import OloproofError

if TYPE_CHECKING:
    from oloproof_core.cases.case import CaseResult

Phase = Literal["system", "evaluator"]


class CaseContext:
    """The case in progress, as seen from user code."""

    __slots__ = ("_phase", "_record", "_workspace")

    def __init__(self, record: CaseResult, phase: Phase, workspace: str | None = None) -> None:
        self._record = record
        self._phase = phase
        self._workspace = workspace

    @property
    def id(self) -> str:
        return self._record.id

    @property
    def input(self) -> Mapping[str, Any]:
        return self._record.input

    @property
    def expected(self) -> Mapping[str, Any] | None:
        if self._phase == "system":
            raise OloproofError(
                "current_case().expected is not available inside a system: a system must "
                "answer from the input alone. Read expected values in an evaluator."
            )
        return self._record.expected

    @property
    def artifacts(self) -> Mapping[str, Any]:
        return MappingProxyType(self._record.artifacts)

    @property
    def workspace(self) -> str | None:
        """The case's own writable folder, seeded with its row's files (`input.files`), and
        the working directory while the system runs; None for a case without files. An
        evaluator reads the folder as the system left it with reads=('workspace',)."""
        return self._workspace

    @property
    def phase(self) -> Phase:
        return self._phase

    @property
    def measurements(self) -> Observation:
        """A snapshot: user code reads the figures but cannot change what the engine keeps."""
        return self._record.measurements.observe()

    def attach(self, name: str, value: Any) -> None:
        """Attach an artifact (a trace, a file's text, any JSON data) to this case."""
        if not isinstance(name, str) or not name:
            raise OloproofError("artifact names are non-empty strings")
        try:
            canonical_json(value)
        except (TypeError, ValueError) as exc:
            raise OloproofError(
                f"artifact {name!r} is not JSON data ({exc}); attach dicts, lists, strings "
                "or numbers (read a file's text and attach that)"
            ) from None
        self._record.artifacts[name] = value

    def step(self, name: str, data: Any = None) -> None:
        """Add a step of the system's own to the case's transcript: work that is not a
        model call (a search, a file read, a tool run in-process), with JSON data.

        The gateway records model calls by itself; this is for the rest. Such steps are
        marked as the system's own: the platform keeps them as the system reported them.
        """
        if self._phase != "system":
            raise OloproofError(
                "current_case().step() is for a system's own work; an evaluator reads the "
                "transcript with reads=('trace',)"
            )
        name = checked_step_name(name)
        data = checked_step_data(name, data)
        if self._record.trace is None:
            self._record.trace = Transcript()
        self._record.trace.add_system_step(name, data)

    def record_model_call(self, call: ModelCall) -> None:
        """Used by the model client to attribute a call to this case."""
        self._record.measurements.model_calls.append(call)

    def __repr__(self) -> str:
        return f"<current case {self.id!r} ({self._phase})>"


_CURRENT: ContextVar[CaseContext | None] = ContextVar("oloproof_current_case", default=None)


def current_case() -> CaseContext:
    """The case being processed by the system or evaluator that calls this."""
    context = _CURRENT.get()
    if context is None:
        raise OloproofError(
            "current_case() was called outside a case: call it from a system or an "
            "evaluator while oloproof runs it"
        )
    return context


def current_case_or_none() -> CaseContext | None:
    return _CURRENT.get()


def enter_case(record: CaseResult, phase: Phase, workspace: str | None = None) -> Any:
    """Make `record` the current case; returns a token for `leave_case`."""
    return _CURRENT.set(CaseContext(record, phase, workspace))


def leave_case(token: Any) -> None:
    _CURRENT.reset(token)
