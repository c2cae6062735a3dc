"""What the engine measured of a case: its latency and its model calls, priced.

The data alone, so the case (which carries it) and the context (which shows it to user
code) each import it and never each other.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from oloproof_core.errors import OloproofError


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
