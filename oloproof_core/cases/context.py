"""`current_case()`: the case being processed, for code running inside a system or evaluator.

The engine sets a context variable around every system call and every evaluator
call, so it follows threads and asyncio tasks without being passed around. Inside
a system the case's `expected` is not reachable: the system must never see it.
The measurements (wall time, model cost) live on the engine's side of this object
and code under test can only read them.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from contextvars import ContextVar
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Literal

from oloproof_core._util.canonical import canonical_json
from oloproof_core.errors import OloproofError

if TYPE_CHECKING:
    from oloproof_core.cases.case import CaseResult

Phase = Literal["system", "evaluator"]


@dataclass(frozen=True, slots=True)
class ModelCall:
    """One model call made while a case was processed, as measured by the model client.

    Frozen and checked so that a recorded call can only ever add to a case's cost.
    """

    role: str
    model: str
    input_tokens: int
    output_tokens: int
    cost_usd: float | None
    latency_ms: float

    def __post_init__(self) -> None:
        figures = (
            self.input_tokens,
            self.output_tokens,
            self.latency_ms,
            0.0 if self.cost_usd is None else self.cost_usd,
        )
        if any(not math.isfinite(figure) or figure < 0 for figure in figures):
            raise OloproofError(
                f"a model call's tokens, cost and latency are non-negative numbers, got {self!r}"
            )


@dataclass(frozen=True, slots=True)
class Observation:
    """A read-only snapshot of what the engine measured for one case.

    `latency_ms` is the wall time of the system call; `cost_usd`, `input_tokens`,
    `output_tokens` and `model_calls` cover only the system's own model calls (judge
    and metric calls are accounted separately). None means it could not be measured.
    """

    latency_ms: float | None
    cost_usd: float | None
    input_tokens: int
    output_tokens: int
    model_calls: tuple[ModelCall, ...]
    protected: bool = True
    """False when the system ran where it could reach the clock and the model client
    (oloproof's own process): the figures are then the system's word, not the platform's."""

    def to_dict(self) -> dict[str, Any]:
        figures: dict[str, Any] = {
            "latency_ms": self.latency_ms,
            "cost_usd": self.cost_usd,
            "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
            "model_calls": len(self.model_calls),
        }
        # Named only when off, so the cache keys of protected figures stay as they were.
        if not self.protected:
            figures["protected"] = False
        return figures


@dataclass(slots=True)
class Measurements:
    """What the engine measured for one case; `system_cost_usd` covers only the system's calls."""

    latency_ms: float | None = None
    model_calls: list[ModelCall] = field(default_factory=list)
    protected: bool = True
    """Whether the platform took these figures where the system could not reach them."""

    def __reduce__(self) -> tuple[Any, ...]:
        # Pickled as its fields (see `CaseResult.__reduce__`).
        return (Measurements, (self.latency_ms, self.model_calls, self.protected))

    def cost_for(self, role: str) -> float | None:
        """Summed cost of the calls made in `role`; None if any of them could not be priced."""
        total = 0.0
        for call in self.model_calls:
            if call.role != role:
                continue
            if call.cost_usd is None:
                return None
            total += call.cost_usd
        return total

    @property
    def system_cost_usd(self) -> float | None:
        return self.cost_for("system")

    def observe(self) -> Observation:
        system_calls = tuple(call for call in self.model_calls if call.role == "system")
        return Observation(
            latency_ms=self.latency_ms,
            cost_usd=self.system_cost_usd,
            input_tokens=sum(call.input_tokens for call in system_calls),
            output_tokens=sum(call.output_tokens for call in system_calls),
            model_calls=system_calls,
            protected=self.protected,
        )


class CaseContext:
    """The case in progress, as seen from user code."""

    __slots__ = ("_phase", "_record")

    def __init__(self, record: CaseResult, phase: Phase) -> None:
        self._record = record
        self._phase = phase

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


def enter_case(record: CaseResult, phase: Phase) -> Any:
    """Make `record` the current case; returns a token for `leave_case`."""
    return _CURRENT.set(CaseContext(record, phase))


def leave_case(token: Any) -> None:
    _CURRENT.reset(token)
