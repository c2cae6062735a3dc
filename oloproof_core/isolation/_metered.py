"""A pool whose processes reach their models only through the metering gateway.

Each process gets a gateway key of its own instead of provider keys; the parent binds
that key to the case it hands the process and, once the reply is in, files the
gateway's record of every call made for the case as the case's model calls. What a
system reports about its own calls is ignored, so no client library, thread or
cheat can change the cost a case is charged. Calls that arrive for no case in flight
(a thread still running after its case) are kept as the run's unattributed calls,
so the run's total stays exact.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from oloproof_core.case import CaseResult
from oloproof_core.context import ModelCall
from oloproof_core.execution import ProgressCallback
from oloproof_core.isolation._pool import ProcessPool
from oloproof_core.isolation._relay import SOCKET_VARIABLE
from oloproof_core.isolation._sandbox import GATEWAY_SOCKET
from oloproof_core.isolation._sandbox_choice import SandboxChoice
from oloproof_core.systems import System
from oloproof_core.usage import usage_by_role, usage_to_dict

if TYPE_CHECKING:
    from oloproof_core.gateway import Gateway, GatewayCall

GATEWAY_URL_VARIABLE = "OLOPROOF_GATEWAY_URL"
"""Set in a system's process: the gateway its model calls go to (and carry the case to)."""


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
    ) -> None:
        # Imported here: a system's own process imports this package, never the server.
        from oloproof_core.gateway import Gateway

        # The port now, so that every process is told where its models are; the server
        # only for processes that load a model client (`_ready`), or on a first call.
        self.gateway = Gateway().listen()
        try:
            self._sandbox = SandboxChoice.choose(
                sandbox, hidden=hidden, gateway_socket=self.gateway.listen_unix
            )
        except BaseException:
            self.gateway.stop()
            raise
        self.gateway.serve_when_called()
        # Several cases share an async process: its calls name their case in a header,
        # honoured only for cases bound to that process's key.
        self._concurrent = per_process > 1
        self._keys: dict[int, str] = {}
        self._unattributed: list[ModelCall] = []
        try:
            self.pool = ProcessPool(
                system,
                processes=processes,
                per_process=per_process,
                timeout=timeout,
                memory_limit_mb=memory_limit_mb,
                child_env=self._environment,
                on_case_start=self._bind,
                on_case_end=self._unbind,
                on_ready=self._ready,
                reported_calls=False,
                grow=grow,
                sandbox=self._sandbox,
            )
        except BaseException:
            self.gateway.stop()
            raise

    def _key(self, slot: int) -> str:
        if slot not in self._keys:
            self._keys[slot] = self.gateway.issue_key(
                "system", f"process-{slot}", concurrent=self._concurrent
            )
        return self._keys[slot]

    def _environment(self, slot: int) -> dict[str, str]:
        key = self._key(slot)
        url = self.gateway.base_url
        environment = {
            **self.gateway.client_env(key),
            "OLOPROOF_SYSTEM_BASE_URL": url,
            "OLOPROOF_SYSTEM_API_KEY": key,
            GATEWAY_URL_VARIABLE: url,
        }
        if self._sandbox.sandbox is not None:  # no network inside: the socket, relayed
            environment[SOCKET_VARIABLE] = GATEWAY_SOCKET
        return environment

    def _bind(self, slot: int, case_id: str) -> None:
        self.gateway.bind(self._key(slot), case_id)

    def _unbind(self, slot: int, case_id: str) -> None:
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
    ) -> list[ModelCall]:
        """Run the cases (as `release`, another release of the pool's system, if given)
        and file each one's metered calls; returns the calls made meanwhile for no case."""
        # Calls that came in since the last cases (a thread an earlier case left running)
        # are the pool's, not these cases' run's: they go to the pool's tally first.
        self._unattributed.extend(metered_call(call) for call in self.gateway.take_unattributed())
        self.pool.run(cases, progress, release=release)
        for case in cases:
            calls = self.gateway.take_calls(case.id)
            case.measurements.model_calls.extend(metered_call(call) for call in calls)
        meanwhile = [metered_call(call) for call in self.gateway.take_unattributed()]
        self._unattributed.extend(meanwhile)
        return meanwhile

    def describe(self) -> dict[str, Any]:
        described = self.pool.describe()
        described["model_cost"] = "metered by oloproof's model gateway"
        described["model_gateway"] = _gateway_start(self.gateway)
        if self._unattributed:
            described["unattributed_model_calls"] = usage_to_dict(usage_by_role(self._unattributed))
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
    costs nothing rather than making the case's cost unmeasurable.
    """
    measured = call.as_model_call()
    if not call.ok and call.input_tokens is None and call.cost_usd is None:
        return ModelCall(
            role=measured.role,
            model=measured.model,
            input_tokens=0,
            output_tokens=0,
            cost_usd=0.0,
            latency_ms=measured.latency_ms,
        )
    return measured
