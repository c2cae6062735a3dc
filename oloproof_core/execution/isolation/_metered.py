"""A pool whose processes reach their models only through the metering gateway.

Each process gets a gateway key of its own instead of provider keys and holds one case
at a time. The parent binds the process's key to the case it hands the process, and
gives the case a key of its own besides (`OPENAI_API_KEY` while the case runs); once
the reply is in, the case ends on the gateway, which cuts any call still open for it,
and the gateway's record of every call made for the case is filed as the case's model
calls, and what the calls said as the case's transcript (with the steps the system
reported itself). Which case a call is charged to is thus the parent's doing: what the system
reports about its calls, or sends with them, is ignored, so no client library, thread,
header or cheat can move cost onto another case or out of the run.

Calls that belong to no case (made between cases, or with the key of a case that had
already returned: a thread a case left running) are kept as the run's unattributed
calls, with why, and calls still open when the run's cases are done are cut and
metered then: the run's total stays exact.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from oloproof_core.cases.case import CaseResult
from oloproof_core.cases.observations import ModelCall
from oloproof_core.cases.usage import usage_by_role, usage_to_dict
from oloproof_core.execution.isolation._first_process import FIRST_SLOT, FirstProcess
from oloproof_core.execution.isolation._metered_env import (
    GATEWAY_URL_VARIABLE as GATEWAY_URL_VARIABLE,
)
from oloproof_core.execution.isolation._metered_env import (
    gateway_and_sandbox,
    metered_environment,
)
from oloproof_core.execution.isolation._pool import ProcessPool
from oloproof_core.execution.isolation._process import (
    AdoptedProcess,
    process_sys_path,
    stop_children,
)
from oloproof_core.execution.isolation._sizing import DEFAULT_MEMORY_LIMIT_MB
from oloproof_core.execution.isolation._transcripts import transcript_of
from oloproof_core.execution.running import ProgressCallback
from oloproof_core.execution.systems import System

if TYPE_CHECKING:
    from oloproof_core.execution.gateway import Gateway, GatewayCall

CASE_KEY_VARIABLE = "OPENAI_API_KEY"
"""Set in a system's process for each case: the case's own gateway key. Clients made
during a case (and plain HTTP reading it per call) use it; a client made before the first
case keeps the process's key, whose calls belong to the case the process holds."""
_IDS_KEPT = 20
"""How many cases with a cut call the provenance names (the count is always whole)."""


class MeterTally:
    """What no case of a run claimed, and the calls that were cut: for its provenance."""

    def __init__(self) -> None:
        self.unattributed: list[ModelCall] = []
        self.reasons: Counter[str] = Counter()
        self.cut_calls = 0
        self.cut_cases = 0
        self.cut_ids: list[str] = []

    def unclaimed(self, calls: Iterable[GatewayCall]) -> None:
        """Calls that belong to no case."""
        for call in calls:
            self.unattributed.append(metered_call(call))
            self.reasons[call.unattributed_reason or "it belonged to no case"] += 1
            self.cut_calls += call.cut_reason is not None

    def case_cut(self, case_id: str, calls: int) -> None:
        """`calls` of the case's were cut when it ended (or when the run did)."""
        if calls:
            self.cut_calls += calls
            self.cut_cases += 1
            if len(self.cut_ids) < _IDS_KEPT:
                self.cut_ids.append(case_id)

    def add(self, other: MeterTally) -> None:
        self.unattributed += other.unattributed
        self.reasons.update(other.reasons)
        self.cut_calls += other.cut_calls
        self.cut_cases += other.cut_cases
        self.cut_ids = (self.cut_ids + other.cut_ids)[:_IDS_KEPT]

    def describe(self, described: dict[str, Any]) -> None:
        """Put this tally's entries in a provenance entry (and drop any it has not)."""
        for name in ("unattributed_model_calls", "unattributed_model_call_reasons"):
            described.pop(name, None)
        described.pop("model_calls_cut", None)
        if self.unattributed:
            described["unattributed_model_calls"] = usage_to_dict(usage_by_role(self.unattributed))
            described["unattributed_model_call_reasons"] = dict(self.reasons)
        if self.cut_calls:
            described["model_calls_cut"] = {
                "calls": self.cut_calls,
                "cases": self.cut_cases,
                "ids": list(self.cut_ids),
                "why": "still open when their case (or the run) ended: each is metered with "
                "what had passed through, its cost unmeasured if the provider had not yet "
                "reported usage",
            }


class MeteredPool:
    """`ProcessPool` plus a gateway that meters every model call its processes make."""

    def __init__(
        self,
        system: System,
        *,
        processes: int,
        per_process: int = 1,
        timeout: float | None = None,
        memory_limit_mb: int | None = None,
        grow: bool = False,
        sandbox: str = "auto",
        hidden: Iterable[str] = (),
        first: FirstProcess | None = None,
    ) -> None:
        if per_process != 1:
            raise ValueError(
                "a metered pool's processes hold one case at a time, since a model call is "
                "charged to the case its process holds: give it more processes instead"
            )
        self._keys: dict[int, str] = {}
        self._tally = MeterTally()
        adopted = self._adopt(system, first, sandbox, hidden, memory_limit_mb)
        try:
            self.pool = ProcessPool(
                system,
                processes=processes,
                timeout=timeout,
                memory_limit_mb=memory_limit_mb,
                child_env=self._environment,
                on_case_start=self._bind,
                on_case_end=self._unbind,
                on_ready=self._ready,
                reported_calls=False,
                grow=grow,
                sandbox=self._sandbox,
                first=adopted,
            )
        except BaseException:
            if adopted is not None:
                stop_children([adopted[0]])
            self._sandbox.close()
            self.gateway.stop()
            raise

    def _adopt(
        self,
        system: System,
        first: FirstProcess | None,
        sandbox: str,
        hidden: Iterable[str],
        memory_limit_mb: int | None,
    ) -> AdoptedProcess | None:
        """Take over `first`'s gateway, sandbox and process when it fits this pool (see
        `_first_process`); otherwise stop it and make this pool's own."""
        hidden = list(hidden)
        limit = memory_limit_mb or DEFAULT_MEMORY_LIMIT_MB
        if first is not None and first.fits(
            mode=sandbox, hidden=hidden, memory_limit_mb=limit, sys_path=process_sys_path(system)
        ):
            self.gateway, self._sandbox, key, child, cgroups = first.hand_over()
            self._keys[FIRST_SLOT] = key
            self._sandbox.say_if_unprotected()
            return child, cgroups
        if first is not None:
            first.close()
        self.gateway, self._sandbox = gateway_and_sandbox(sandbox, hidden)
        return None

    def _key(self, slot: int) -> str:
        if slot not in self._keys:
            self._keys[slot] = self.gateway.issue_key("system", f"process-{slot}")
        return self._keys[slot]

    def _environment(self, slot: int) -> dict[str, str]:
        sandboxed = self._sandbox.sandbox is not None
        return metered_environment(self.gateway, self._key(slot), sandboxed=sandboxed)

    def _bind(self, slot: int, case_id: str) -> dict[str, str]:
        """The process's key holds the case from now on; the case's own key goes with it."""
        return {CASE_KEY_VARIABLE: self.gateway.bind(self._key(slot), case_id)}

    def _unbind(self, slot: int, case_id: str) -> None:
        """The case is over: its key is no case's any more, and its open calls are cut."""
        self.gateway.unbind(self._key(slot), case_id)

    def _ready(self, slot: int, details: Mapping[str, Any]) -> None:
        """A process that loaded a model client gets a serving gateway before its first case."""
        if details.get("models"):
            self.gateway.serve(reason="before the cases")

    def start(self, processes: int | None = None) -> None:
        """Start (and warm) the processes now rather than with the first cases."""
        self.pool.start(processes)

    def launch(self, processes: int | None = None) -> None:
        """Start the processes and return at once (see `ProcessPool.launch`)."""
        self.pool.launch(processes)

    def run(
        self,
        cases: Sequence[CaseResult],
        progress: ProgressCallback | None = None,
        *,
        release: System | None = None,
    ) -> MeterTally:
        """Run the cases (as `release`, another release of the pool's system, if given)
        and file each one's metered calls; returns what no case claimed meanwhile."""
        # Calls that came in since the last cases (a thread an earlier case left running)
        # are the pool's, not these cases' run's: they go to the pool's tally first.
        self._tally.unclaimed(self.gateway.take_unattributed())
        self.pool.run(cases, progress, release=release)
        # Every case has ended, and cut its own calls; what is still open belongs to none.
        self.gateway.cut_open_calls()
        meanwhile = MeterTally()
        for case in cases:
            calls = self.gateway.take_calls(case.id)
            case.measurements.model_calls.extend(metered_call(call) for call in calls)
            case.trace = transcript_of(calls, case.trace)
            if case.trace is not None:
                case.trace.packed()  # here, not in the store, which writes as cases run
            meanwhile.case_cut(case.id, sum(call.cut_reason is not None for call in calls))
        meanwhile.unclaimed(self.gateway.take_unattributed())
        self._tally.add(meanwhile)
        return meanwhile

    def describe(self) -> dict[str, Any]:
        described = self.pool.describe()
        described["model_cost"] = "metered by oloproof's model gateway"
        described["model_gateway"] = _gateway_start(self.gateway)
        # Calls a lingering thread made since the cases ended are the pool's too.
        self._tally.unclaimed(self.gateway.take_unattributed())
        self._tally.describe(described)
        return described

    def close(self) -> None:
        try:
            self.pool.close()
        finally:
            self.gateway.stop()

    def __enter__(self) -> MeteredPool:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


def _gateway_start(gateway: Gateway) -> str:
    """How the run's gateway came to serve, in a person's words, for the provenance."""
    if gateway.failure is not None:
        failure = gateway.failure
        return f"could not start on the first model call, so the system's calls failed: {failure}"
    if gateway.started == "not started":
        return "not started: no process loaded a model client and no model call came"
    took = f"{gateway.start_ms:.0f} ms" if gateway.start_ms is not None else "its start-up"
    if gateway.started == "by a model call":
        return (
            "started by the first model call, during the cases (the system loads its model "
            f"client inside a case): the cases in flight then waited {took} for it"
        )
    return f"started before the first case ({took})"


def metered_call(call: GatewayCall) -> ModelCall:
    """The gateway's record as a case's model call.

    A request the provider refused (an error status and no usage) is not billed, so it
    costs nothing rather than making the case's cost unmeasurable. A call cut before the
    provider answered is not a refusal: what it cost is not known.
    """
    measured = call.as_model_call()
    refused = call.status >= 400 and call.cut_reason is None
    if refused and call.input_tokens is None and call.cost_usd is None:
        return ModelCall(
            role=measured.role,
            model=measured.model,
            input_tokens=0,
            output_tokens=0,
            cost_usd=0.0,
            latency_ms=measured.latency_ms,
        )
    return measured
