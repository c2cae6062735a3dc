"""One evaluator's processes: the system pool's machinery, with verdicts for cases.

The evaluator is wrapped as a system (`_in_child`) whose input is a batch of cases' declared
parts and whose output is their verdicts, and run by `ProcessPool`: the same spawn, the
same sandbox, memory cap, scrubbed environment and kill at the deadline as a system's.
Each verdict has its own limit in its process; a batch stops taking verdicts after
`BUDGET_S`, so the pool kills it only past one verdict's limit and `GRACE_S`.

An evaluator that calls models (`io_bound`: a model judge, a metric file calling `llm`;
an async one; any whose process has loaded a model client) is sent one verdict to a
message, in up to `OLOPROOF_JUDGE_CONCURRENCY` processes, and its process's gateway keys
(one per role it may call; its `system` calls are the metric role's, as they always
were) are bound to that verdict's case, so the gateway files each call on its case.
Any other is sent batches, several verdicts to a message: a call made from one is the
run's unattributed usage, counted in its totals.

A batch whose process died or was killed is sent again one verdict at a time, so only
the verdict that did it is lost, with the reason.
"""

from __future__ import annotations

import functools
import itertools
import json
import math
import warnings
from collections import deque
from collections.abc import Mapping, Sequence
from typing import Any

from oloproof_core.cases.case import CaseResult
from oloproof_core.cases.observations import ModelCall
from oloproof_core.cases.verdict import Verdict
from oloproof_core.execution.isolation import (
    GATEWAY_URL_VARIABLE,
    ProcessPool,
    UnprotectedRunWarning,
    metered_call,
)
from oloproof_core.execution.isolation._relay import SOCKET_VARIABLE
from oloproof_core.execution.isolation._sandbox import GATEWAY_SOCKET
from oloproof_core.execution.isolation._sandbox_choice import SandboxChoice
from oloproof_core.execution.running import ProgressCallback
from oloproof_core.execution.systems import System
from oloproof_core.judging.contained._in_child import judge_batch, warm
from oloproof_core.judging.contained._sandbox_folders import show_folders
from oloproof_core.judging.contained._travel import pack
from oloproof_core.judging.contained._wire import case_parts, verdict_from
from oloproof_core.judging.evaluators import Evaluator
from oloproof_core.models import ROLES, ModelError, settings_for

GRACE_S = 1.0
"""How long past a verdict's limit the pool waits before it kills the process."""
BUDGET_S = 0.2
"""A batch takes no new verdict once it has run this long (well inside `GRACE_S`)."""
MAX_BATCH = 256
_KEY_ROLES = ("metric", "judge", "reflection")


class EvaluatorPool:
    """The processes one evaluator judges in, for as long as the run keeps them."""

    def __init__(
        self,
        evaluator: Evaluator,
        *,
        gateway: Any,
        time_limit: float | None,
        over_limit: str,
        memory_limit_mb: int | None,
        sandbox: str,
        hidden: Sequence[str],
        concurrency: int,
        processes: int,
    ) -> None:
        self.evaluator = evaluator
        self.version = evaluator.version
        self.gateway = gateway
        self.time_limit = time_limit
        self.over_limit = over_limit
        self.unattributed: list[ModelCall] = []
        role = getattr(evaluator, "role", "metric")  # a model judge's, else the metric role
        self.role = role if role in _KEY_ROLES else "metric"
        packed = pack(evaluator)
        system = System(
            functools.partial(judge_batch, packed),
            name=f"evaluator {evaluator.criterion}",
            version=evaluator.version,
            warmup=functools.partial(warm, packed),
        )
        # A workspace's files are megabytes and a command in it takes seconds: such
        # verdicts travel one to a message, as those that wait on a model do.
        waits = evaluator.io_bound or evaluator.is_async or "workspace" in evaluator.reads
        self.batch_limit = 1 if waits else MAX_BATCH
        self._keys: dict[int, dict[str, str]] = {}
        self._batches: dict[str, list[str]] = {}
        self._numbers = itertools.count()
        self._sandbox = _sandbox(sandbox, hidden, gateway, packed.folders)
        self.pool = ProcessPool(
            system,
            processes=concurrency if waits else processes,
            timeout=None if time_limit is None else time_limit + GRACE_S,
            memory_limit_mb=memory_limit_mb,
            child_env=self._environment,
            on_case_start=self._bind,
            on_case_end=self._unbind,
            on_ready=self._ready,
            reported_calls=False,
            grow=True,
            sandbox=self._sandbox,
        )

    def judge(
        self, cases: Sequence[CaseResult], progress: ProgressCallback | None = None
    ) -> list[Verdict]:
        """Each case's verdict, in order; a verdict whose process failed is missing."""
        parts = [case_parts(case, self.evaluator.reads) for case in cases]
        verdicts: list[Verdict | None] = [None] * len(cases)
        waiting: deque[int] = deque(range(len(cases)))
        alone: list[int] = []
        phase = f"judge {self.evaluator.criterion}"
        while waiting or alone:
            sent = self._batches_of(waiting, alone, cases, parts)
            done = sum(verdict is not None for verdict in verdicts)
            report = _progress(progress, phase, done, len(cases), sent)
            self.pool.run([record for record, _ in sent], report)
            self.gateway.cut_open_calls()  # every verdict sent has ended: nothing is open
            for record, indices in sent:
                self._settle(record, indices, verdicts, waiting, alone)
                self._batches.pop(record.id, None)
        self._file_calls(cases)
        if progress is not None:
            progress(phase, len(cases), len(cases))
        return [verdict for verdict in verdicts if verdict is not None]

    def _batches_of(
        self,
        waiting: deque[int],
        alone: list[int],
        cases: Sequence[CaseResult],
        parts: list[dict[str, Any]],
    ) -> list[tuple[CaseResult, list[int]]]:
        """This round's messages: the verdicts run again alone, one each, then batches."""
        groups = [[index] for index in alone]
        alone.clear()
        size = max(1, min(self.batch_limit, math.ceil(len(waiting) / (2 * self.pool.processes))))
        while waiting:
            groups.append([waiting.popleft() for _ in range(min(size, len(waiting)))])
        sent = []
        for indices in groups:
            batch_id = f"batch-{next(self._numbers)}"
            self._batches[batch_id] = [cases[index].id for index in indices]
            items = [[cases[index].id, parts[index]] for index in indices]
            message = {"items": items, "limit": self.time_limit, "budget": BUDGET_S}
            sent.append((CaseResult(id=batch_id, input=message, expected=None), indices))
        return sent

    def _settle(
        self,
        record: CaseResult,
        indices: list[int],
        verdicts: list[Verdict | None],
        waiting: deque[int],
        alone: list[int],
    ) -> None:
        if record.error is not None:
            if len(indices) > 1:  # any of them may have done it: each goes again alone
                alone.extend(indices)
            else:
                verdicts[indices[0]] = self._lost(record.error.type, record.error.message)
            return
        reply = _reply(record.output)
        if reply.get("models"):  # it calls models: one verdict at a time, each call filed
            self.batch_limit = 1
        replies = reply.get("verdicts")
        if not isinstance(replies, list) or not 0 < len(replies) <= len(indices):
            replies = [["malformed", record.output]]
        for index, message in zip(indices, replies, strict=False):
            verdicts[index] = verdict_from(message, self.evaluator, self.over_limit)
        waiting.extendleft(reversed(indices[len(replies) :]))

    def _lost(self, kind: str, message: str) -> Verdict:
        if kind == "TimeoutError":
            return Verdict.failed_to_judge(self.over_limit)
        said = message.replace("the system's process", "the evaluator's process")
        said = said.replace("while running this case", "while judging this case")
        said = said.replace("the system ran out of memory", "the evaluator ran out of memory")
        return Verdict.failed_to_judge(f"{kind}: {said}")

    def _file_calls(self, cases: Sequence[CaseResult]) -> None:
        """Each case's metered model calls, as the gateway recorded them, on the case; the
        calls no verdict claimed are the run's, kept apart."""
        for case in cases:
            for call in self.gateway.take_calls(case.id):
                case.measurements.model_calls.append(metered_call(call))
        self.unattributed += [metered_call(call) for call in self.gateway.take_unattributed()]

    # -- the gateway's keys: one per role and process, bound to the verdicts in flight --

    def _slot_keys(self, slot: int) -> dict[str, str]:
        if slot not in self._keys:
            self._keys[slot] = {
                role: self.gateway.issue_key(role, f"evaluator {self.evaluator.criterion} {slot}")
                for role in _KEY_ROLES
            }
        return self._keys[slot]

    def _environment(self, slot: int) -> dict[str, str]:
        keys = self._slot_keys(slot)
        url = self.gateway.base_url
        environment = {**self.gateway.client_env(keys[self.role]), GATEWAY_URL_VARIABLE: url}
        for role in (*ROLES, "default"):
            name = f"OLOPROOF_{role.upper()}_"
            charged = {"system": "metric", "default": self.role}.get(role, role)
            environment[name + "BASE_URL"] = url
            environment[name + "API_KEY"] = keys[charged]
            environment.update(_settings_of(role, name))
        if self._sandbox.sandbox is not None:  # no network inside: the socket, relayed
            environment[SOCKET_VARIABLE] = GATEWAY_SOCKET
        return environment

    def _ready(self, slot: int, details: Mapping[str, Any]) -> None:
        if details.get("models"):
            self.batch_limit = 1
            self.gateway.serve(reason="before the verdicts")

    def _bind(self, slot: int, batch_id: str) -> dict[str, str] | None:
        """One verdict: the process's keys hold its case, and the case's own keys are set
        for it (a client made during the verdict uses them). Several: none of them."""
        case_ids = self._batches.get(batch_id, ())
        if len(case_ids) != 1:
            return None
        own = {
            role: self.gateway.bind(key, case_ids[0]) for role, key in self._slot_keys(slot).items()
        }
        environment = {"OPENAI_API_KEY": own[self.role]}
        for role in (*ROLES, "default"):
            charged = {"system": "metric", "default": self.role}.get(role, role)
            environment[f"OLOPROOF_{role.upper()}_API_KEY"] = own[charged]
        return environment

    def _unbind(self, slot: int, batch_id: str) -> None:
        case_ids = self._batches.get(batch_id, ())
        if len(case_ids) == 1:
            for key in self._slot_keys(slot).values():
                self.gateway.unbind(key, case_ids[0])

    def describe(self) -> dict[str, Any]:
        """Its processes, as the provenance tells them (the sandbox: `sandbox()`)."""
        described = self.pool.describe()
        return {
            "processes": described["processes"],
            "restarts": described["restarts"],
            "verdicts_per_message": self.batch_limit,
        }

    def sandbox(self) -> dict[str, Any]:
        return dict(self.pool.describe()["sandbox"])

    def close(self) -> None:
        try:
            self.pool.close()
        finally:
            for keys in self._keys.values():
                for key in keys.values():
                    self.gateway.revoke_key(key)


def _reply(output: Any) -> dict[str, Any]:
    """A batch's reply: a JSON text of a mapping (anything else: no verdicts)."""
    try:
        reply = json.loads(output) if isinstance(output, str) else None
    except ValueError:
        reply = None
    return reply if isinstance(reply, dict) else {}


def _settings_of(role: str, prefix: str) -> dict[str, str]:
    """The run's own settings of `role` (its `configure()` ones too) a process needs to
    call through the gateway: the model's name and the client's patience, never a key."""
    if role == "default":
        return {}
    try:
        settings = settings_for(role)
    except ModelError:
        return {}
    return {
        prefix + "MODEL": settings.model,
        prefix + "TIMEOUT": repr(settings.timeout_s),
        prefix + "MAX_RETRIES": str(settings.max_retries),
        prefix + "CONCURRENCY": str(settings.concurrency),
        prefix + "BACKOFF": repr(settings.backoff_s),
    }


def _sandbox(mode: str, hidden: Sequence[str], gateway: Any, folders: Sequence[str]) -> Any:
    with warnings.catch_warnings():  # said once for the run, by its system's pool
        warnings.simplefilter("ignore", UnprotectedRunWarning)
        choice = SandboxChoice.choose(mode, hidden=hidden, gateway_socket=gateway.listen_unix)
    if choice.sandbox is not None:
        show_folders(choice.sandbox, folders)
    gateway.serve_when_called()
    return choice


def _progress(
    progress: ProgressCallback | None,
    phase: str,
    done: int,
    total: int,
    sent: list[tuple[CaseResult, list[int]]],
) -> ProgressCallback | None:
    """The pool's count of messages as a count of verdicts (close enough for a bar)."""
    if progress is None or not sent:
        return None
    per_message = sum(len(indices) for _, indices in sent) / len(sent)

    def report(_phase: str, messages: int, _total: int) -> None:
        progress(phase, min(total, done + round(messages * per_message)), total)

    return report
