"""Model usage by role: calls, tokens, cost and latency, per case and for a whole run.

The system's own calls, the judge's and the metric's are kept apart: a judge's cost
is never the system's. A cost of None means some call of that role could not be
priced (the provider returned no usage, or the model has no price), and says so
rather than counting it as free.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from oloproof_core.cases.observations import ModelCall


@dataclass(slots=True)
class RoleUsage:
    calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float | None = 0.0
    latency_ms: float = 0.0

    def add(self, call: ModelCall) -> None:
        self.calls += 1
        self.input_tokens += call.input_tokens
        self.output_tokens += call.output_tokens
        self.latency_ms += call.latency_ms
        if self.cost_usd is not None:
            self.cost_usd = None if call.cost_usd is None else self.cost_usd + call.cost_usd

    def to_dict(self) -> dict[str, Any]:
        return {
            "calls": self.calls,
            "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
            "cost_usd": None if self.cost_usd is None else round(self.cost_usd, 10),
            "latency_ms": round(self.latency_ms, 3),
        }


def usage_by_role(calls: Iterable[ModelCall]) -> dict[str, RoleUsage]:
    """The calls summed per role, roles in the order first seen."""
    usage: dict[str, RoleUsage] = {}
    for call in calls:
        usage.setdefault(call.role, RoleUsage()).add(call)
    return usage


def usage_to_dict(usage: dict[str, RoleUsage]) -> dict[str, dict[str, Any]]:
    return {role: figures.to_dict() for role, figures in usage.items()}
