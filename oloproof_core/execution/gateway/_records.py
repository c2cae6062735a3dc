"""What each call through the gateway cost, kept where the measured code cannot reach it.

The ledger lives in the parent process; a system only ever talks HTTP to the gateway,
so it can add calls (by making them) but never edit, remove or re-price one.
"""

from __future__ import annotations

import threading
from collections import defaultdict
from dataclasses import dataclass, replace

from oloproof_core.cases.observations import ModelCall
from oloproof_core.execution.gateway._exchange import Conversations, Exchange


@dataclass(frozen=True, slots=True)
class GatewayCall:
    """One request forwarded to a provider, as the gateway measured it.

    `model` is the model the provider says answered (a dated snapshot, say), or the
    model forwarded when the reply names none. Tokens are None when the provider
    returned no usage, and `cost_usd` is None whenever it could not be measured;
    `unmeasured_reason` then says why. `latency_ms` runs from the request leaving
    the gateway to the last byte of the reply (or to the moment it was cut).

    `case_id` is None when the call belongs to no case, and `unattributed_reason` then
    says why (one of `_keys.UNATTRIBUTED_REASONS`). `cut_reason` says why the gateway
    ended the call before the provider had finished it (`_keys.CUT_REASONS`): it is
    metered with what had passed through by then.

    `started_at` is when the request reached the gateway (seconds since the epoch, for
    ordering a case's transcript); `exchange` what the call said (`_exchange`), for a
    call of a case only the messages it added to the case's conversation.
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
    unattributed_reason: str | None = None
    cut_reason: str | None = None
    started_at: float = 0.0
    exchange: Exchange | None = None

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
    """Calls per case, and running totals per role that taking calls never reduces.

    Calls are filed by case, so taking one case's calls costs the same however many
    calls the run holds (a 100,000-case run takes each case's calls once).
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._sequence = 0
        self._by_case: dict[str | None, list[tuple[int, GatewayCall]]] = defaultdict(list)
        self._totals: dict[str, RoleTotals] = defaultdict(RoleTotals)
        self._conversations = Conversations()

    def add(self, call: GatewayCall) -> None:
        with self._lock:
            if call.exchange is not None:  # a call of no case is in no transcript
                case_id, exchange = call.case_id, call.exchange
                said = None if case_id is None else self._conversations.added(case_id, exchange)
                call = replace(call, exchange=said)
            self._sequence += 1
            self._by_case[call.case_id].append((self._sequence, call))
            self._totals[call.role] = self._totals[call.role].plus(call)

    def calls(self, case_id: str | None = None) -> list[GatewayCall]:
        """The calls not taken yet: of one case, or (no case given) all, in arrival order."""
        with self._lock:
            if case_id is not None:
                return [call for _, call in self._by_case.get(case_id, [])]
            filed = sorted(entry for entries in self._by_case.values() for entry in entries)
        return [call for _, call in filed]

    def take(self, case_id: str | None) -> list[GatewayCall]:
        with self._lock:
            taken = self._by_case.pop(case_id, [])
            self._conversations.forget(case_id)
        return [call for _, call in taken]

    def totals(self) -> dict[str, RoleTotals]:
        with self._lock:
            return dict(self._totals)
