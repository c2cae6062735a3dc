"""A run's evaluators in processes of their own: which ones, their pools, their gateway.

An evaluator that runs code the run did not write (a metric file, an `@evaluator`
function, a model judge, a custom class, a regular expression given by the user,
which the system's output can make backtrack for ever) judges in processes of its
own. Only `ExactMatch`, `Contains`, the transcript's counters (`ToolUsed`,
`ToolSequence`, `StepCount`) and a `JsonSchema` without patterns, whose code is
oloproof's and whose cost the output's (or the capped transcript's) size bounds, judge
in the run's process (a
schema with a `pattern`, or read from each case's `expected`, runs regular
expressions: that `JsonSchema` judges contained too).

Pools start when a first verdict is not cached (the judging asks the cache first),
so a run whose verdicts are all cached starts no process. They are kept for the run,
with one metering gateway for all of them, and closed when the run ends.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from oloproof_core.cases.case import CaseResult
from oloproof_core.cases.usage import usage_by_role, usage_to_dict
from oloproof_core.cases.verdict import Verdict
from oloproof_core.execution.isolation import IsolationError, metered_call, pool_shape
from oloproof_core.execution.running import ProgressCallback
from oloproof_core.judging.contained._pool import EvaluatorPool
from oloproof_core.judging.evaluators import (
    Contains,
    Evaluator,
    ExactMatch,
    JsonSchema,
    StepCount,
    ToolSequence,
    ToolUsed,
)

_IN_THE_RUNS_PROCESS = (ExactMatch, Contains, ToolUsed, ToolSequence, StepCount)
_PATTERN_KEYWORDS = frozenset({"pattern", "patternProperties"})


def runs_in_process_of_its_own(evaluator: Evaluator) -> bool:
    """Whether `evaluator` runs code (or patterns) not oloproof's own (module docstring)."""
    if type(evaluator) is JsonSchema:
        return evaluator.schema is None or _has_patterns(evaluator.schema)
    return type(evaluator) not in _IN_THE_RUNS_PROCESS


def _has_patterns(schema: Any) -> bool:
    waiting = [schema]
    while waiting:
        item = waiting.pop()
        if isinstance(item, dict):
            if _PATTERN_KEYWORDS & item.keys():
                return True
            waiting.extend(item.values())
        elif isinstance(item, list):
            waiting.extend(item)
    return False


class ContainedJudging:
    """The processes a run's evaluators judge in (see the module docstring).

    `time_limit`: seconds per verdict (None: none); `limit_origin` says where it came
    from, for the reason a verdict over it is missing. The rest are the run's: the
    memory cap per process, the sandbox mode, the paths the sandbox hides, and how many
    verdicts an evaluator that waits judges at once.
    """

    def __init__(
        self,
        *,
        time_limit: float | None,
        limit_origin: str,
        memory_limit_mb: int | None,
        sandbox: str,
        hidden: Sequence[str],
        concurrency: int,
    ) -> None:
        self.time_limit = time_limit
        self._over_limit = (
            f"TimeoutError: the evaluator took longer than its {time_limit:g} s time limit "
            f"per verdict ({limit_origin})"
            if time_limit is not None
            else ""
        )
        self._memory_limit_mb = memory_limit_mb
        self._sandbox = sandbox
        self._hidden = tuple(hidden)
        self._concurrency = concurrency
        self._gateway: Any = None
        self._pools: dict[str, EvaluatorPool] = {}
        self._described: dict[str, dict[str, Any]] = {}
        self._sandbox_described: dict[str, Any] | None = None
        self._unattributed: list[Any] = []

    @staticmethod
    def takes(evaluator: Evaluator) -> bool:
        """Whether `evaluator` judges here (`runs_in_process_of_its_own`)."""
        return runs_in_process_of_its_own(evaluator)

    def judge(
        self,
        evaluator: Evaluator,
        cases: Sequence[CaseResult],
        progress: ProgressCallback | None = None,
    ) -> list[Verdict]:
        """`evaluator`'s verdict of each case, judged in its processes."""
        try:
            pool = self._pool_for(evaluator)
            return pool.judge(cases, progress)
        except IsolationError as exc:
            self._drop(evaluator.criterion)
            reason = f"IsolationError: {exc}"
            return [Verdict.failed_to_judge(reason) for _ in cases]

    def launch(self, evaluators: Sequence[Evaluator]) -> None:
        """Start the processes of each evaluator that judges here now, without waiting:
        for work whose first verdicts are certain to be asked for (an optimization's),
        so that they start beside the system's first cases instead of after them."""
        for evaluator in evaluators:
            if self.takes(evaluator):
                try:
                    self._pool_for(evaluator).pool.launch()
                except IsolationError:
                    self._drop(evaluator.criterion)  # said by `judge`, with its verdicts

    def _pool_for(self, evaluator: Evaluator) -> EvaluatorPool:
        pool = self._pools.get(evaluator.criterion)
        if pool is not None and (
            pool.evaluator is not evaluator or pool.version != evaluator.version
        ):
            self._drop(evaluator.criterion)  # its file changed between batches: a new version
            pool = None
        if pool is None:
            if self._gateway is None:
                from oloproof_core.execution.gateway import (
                    Gateway,  # a run without one loads no server
                )

                self._gateway = Gateway().listen()
            processes, _ = pool_shape(is_async=False, concurrency=None)
            pool = EvaluatorPool(
                evaluator,
                gateway=self._gateway,
                time_limit=self.time_limit,
                over_limit=self._over_limit,
                memory_limit_mb=self._memory_limit_mb,
                sandbox=self._sandbox,
                hidden=self._hidden,
                concurrency=self._concurrency,
                processes=min(processes, self._concurrency),
            )
            self._pools[evaluator.criterion] = pool
        return pool

    @property
    def started(self) -> bool:
        """Whether any evaluator judged here (else the run started no process for them)."""
        return bool(self._pools or self._described)

    def _drop(self, criterion: str) -> None:
        pool = self._pools.pop(criterion, None)
        if pool is not None:
            self._described[criterion] = pool.describe()
            self._sandbox_described = self._sandbox_described or pool.sandbox()
            self._unattributed += pool.unattributed
            pool.close()

    def describe(self) -> dict[str, Any]:
        """The provenance entry: where each contained evaluator judged, under what limit."""
        described = {**self._described}
        described.update({name: pool.describe() for name, pool in self._pools.items()})
        sandbox = self._sandbox_described
        for pool in self._pools.values():
            sandbox = sandbox or pool.sandbox()
        entry: dict[str, Any] = {
            "isolation": "process",
            "time_limit_s": self.time_limit,
            "sandbox": sandbox,
            "evaluators": described,
        }
        if self._gateway is not None:  # a call of a thread a verdict left running
            self._unattributed += [metered_call(call) for call in self._gateway.take_unattributed()]
        unattributed = [*self._unattributed]
        for pool in self._pools.values():
            unattributed += pool.unattributed
        if unattributed:
            entry["unattributed_model_calls"] = usage_to_dict(usage_by_role(unattributed))
        return entry

    def close(self) -> None:
        try:
            for criterion in list(self._pools):
                self._drop(criterion)
        finally:
            if self._gateway is not None:
                self._unattributed += [
                    metered_call(call) for call in self._gateway.take_unattributed()
                ]
                self._gateway.stop()
                self._gateway = None
