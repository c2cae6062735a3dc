"""What each call through the gateway cost, kept where the measured code cannot reach it.

The ledger lives in the parent process; a system only ever talks HTTP to the gateway,
so it can add calls (by making them) but never edit, remove or re-price one.
"""

from __future__ import annotations

import threading
from collections import defaultdict
from dataclasses import dataclass

from oloproof_core.context import ModelCall


@dataclass(frozen=True, slots=True)
class GatewayCall:
    """One request forwarded to a provider, as the gateway measured it.

    `model` is the model the provider says answered (a dated snapshot, say), or the
    model forwarded when the reply names none. Tokens are None when the provider
    returned no usage, and `cost_usd` is None whenever it could not be measured;
    `unmeasured_reason` then says why. `latency_ms` runs from the request leaving
    the gateway to the last byte of the reply.
    """

    role: str
    model: str
    input_tokens: int | None
    output_tokens: int | None
    latency_ms: float
    cost_usd: float | None
    case_id: str | None
    status: int
    streamed: bool
    unmeasured_reason: str | None
    endpoint: str
    key_label: str

    @property
    def ok(self) -> bool:
        return 200 <= self.status < 300

    def as_model_call(self) -> ModelCall:
        """The same call as the engine's per-case record (unknown tokens count as 0)."""
        return ModelCall(
            role=self.role,
            model=self.model,
            input_tokens=self.input_tokens or 0,
            output_tokens=self.output_tokens or 0,
            cost_usd=self.cost_usd,
            latency_ms=self.latency_ms,
        )


@dataclass(frozen=True, slots=True)
class RoleTotals:
    """Everything one role spent during the run.

    `cost_usd` sums the calls whose cost was measured; `unmeasured_calls` counts the
    others, so a reader knows when the sum is a lower bound.
    """

    calls: int = 0
    failed_calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float = 0.0
    unmeasured_calls: int = 0
    latency_ms: float = 0.0

    def plus(self, call: GatewayCall) -> RoleTotals:
        return RoleTotals(
            calls=self.calls + 1,
            failed_calls=self.failed_calls + (not call.ok),
            input_tokens=self.input_tokens + (call.input_tokens or 0),
            output_tokens=self.output_tokens + (call.output_tokens or 0),
            cost_usd=self.cost_usd + (call.cost_usd or 0.0),
            unmeasured_calls=self.unmeasured_calls + (call.cost_usd is None),
            latency_ms=self.latency_ms + call.latency_ms,
        )


class Ledger:
    """Calls per case, and running totals per role that taking calls never reduces."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._calls: list[GatewayCall] = []
        self._totals: dict[str, RoleTotals] = defaultdict(RoleTotals)

    def add(self, call: GatewayCall) -> None:
        with self._lock:
            self._calls.append(call)
            self._totals[call.role] = self._totals[call.role].plus(call)

    def calls(self, case_id: str | None = None) -> list[GatewayCall]:
        with self._lock:
            if case_id is None:
                return list(self._calls)
            return [call for call in self._calls if call.case_id == case_id]

    def take(self, case_id: str) -> list[GatewayCall]:
        with self._lock:
            taken = [call for call in self._calls if call.case_id == case_id]
            self._calls = [call for call in self._calls if call.case_id != case_id]
        return taken

    def totals(self) -> dict[str, RoleTotals]:
        with self._lock:
            return dict(self._totals)
