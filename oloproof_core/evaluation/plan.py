"""A run's plan: the system, evaluators, policy and limits checked before any case runs.

Every path that runs cases (`evaluate()`, the command, the workers' chunks, an
optimization's candidates) starts from the same `RunPlan`.
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from oloproof_core.datasets.dataset import load_dataset
from oloproof_core.datasets.rows import Dataset
from oloproof_core.errors import ConfigError, DeclarationError
from oloproof_core.evaluation.auto_repeats import AUTO_MOST, allocated_dataset
from oloproof_core.evaluation.repeats import (
    AUTO,
    check_judge_repeats,
    check_repeats,
    repeated_dataset,
)
from oloproof_core.execution.isolation import DEFAULT_MEMORY_LIMIT_MB, ISOLATION_MODES, sandbox_mode
from oloproof_core.execution.running import DEFAULT_CONCURRENCY
from oloproof_core.execution.systems import System, as_system
from oloproof_core.judging.evaluators import Evaluator
from oloproof_core.judging.judge import JudgingTally, SettledVerdicts, VerdictLimit, check_criteria
from oloproof_core.judging.judge_repeats import AskedValues, with_judge_repeats
from oloproof_core.stats._validate import check_confidence

if TYPE_CHECKING:
    from oloproof_core.execution.isolation import MeteredPool
    from oloproof_core.execution.isolation._lease import PoolLease
    from oloproof_core.judging.contained import ContainedJudging
    from oloproof_core.results.store import Store

DatasetSource = str | os.PathLike[str] | Sequence[Mapping[str, Any]] | Dataset


@dataclass(slots=True)
class RunPlan:
    """A validated run: what to execute and how to judge and decide it.

    The in-process path and the distributed path (chunks on Celery workers, then a
    finalising step) share it, so both run, judge, aggregate and gate the same way.
    `requested_concurrency` is what the caller asked for (None: the defaults, which
    differ between threads and processes). `pool` is the run's own (`open_pool`), or
    a lease on processes it shares with other releases of its system (`PoolLease`:
    an optimization's candidates). `judging`: the processes its evaluators judge in
    (`keep_judging`); `evaluator_timeout`: their limit per verdict, if not `timeout`.
    """

    release: System
    evaluators: list[Evaluator]
    concurrency: int
    timeout: float | None
    confidence: float
    policy: Any = None
    isolation: str = "process"
    memory_limit_mb: int = DEFAULT_MEMORY_LIMIT_MB
    requested_concurrency: int | None = None
    sandbox: str = "auto"
    hidden_paths: tuple[str, ...] = ()
    """What the sandbox hides from the system beside the store: the dataset's file."""
    tallies: dict[str, JudgingTally] = field(default_factory=dict)
    settled: SettledVerdicts = field(default_factory=SettledVerdicts)
    execution: dict[str, Any] = field(default_factory=dict)
    pool: MeteredPool | PoolLease | None = None
    evaluator_timeout: float | None = None
    judging: ContainedJudging | None = None
    judging_execution: dict[str, Any] = field(default_factory=dict)
    repeats: int = 1
    """How many times each case runs (`evaluation/repeats.py`); with `repeats: auto`, the
    most a case runs (`evaluation/auto_repeats.py`)."""
    auto_repeats: bool = False
    tries: dict[str, int] | None = None
    """With `repeats: auto`, each case's tries once the dataset is loaded."""
    evidence_runs: int = 0
    """With `repeats: auto`, how many earlier runs the allocation was read from."""
    judge_repeats: int = 1
    """How many times a model judge judges each output (`judging/judge_repeats.py`)."""
    judge_asked: AskedValues = field(default_factory=dict)
    """Each model judge's values per asking, per case, for the variance split."""

    @property
    def verdict_limit(self) -> VerdictLimit:
        """Each verdict's time limit: `evaluator_timeout`, else the run's `timeout`."""
        if self.evaluator_timeout is not None:
            return VerdictLimit(self.evaluator_timeout, "evaluator_timeout")
        return VerdictLimit(
            self.timeout, "the run's timeout; evaluator_timeout gives evaluators their own"
        )


def plan_run(
    *,
    system: Any,
    evaluators: Sequence[Evaluator],
    policy: Any = None,
    concurrency: int | None = None,
    timeout: float | None = None,
    confidence: float = 0.95,
    isolation: str = "process",
    memory_limit_mb: int | None = None,
    sandbox: str | None = None,
    evaluator_timeout: float | None = None,
    repeats: int | str = 1,
    judge_repeats: int = 1,
) -> RunPlan:
    evaluators = list(evaluators)
    if not evaluators:
        raise DeclarationError(
            "evaluators is empty: give at least one, e.g. "
            "[ExactMatch(criterion='exact_label', field='label')]"
        )
    check_criteria(evaluators)
    check_confidence(confidence)
    counted, judge_repeats = check_repeats(repeats), check_judge_repeats(judge_repeats)
    # `not timeout > 0` also refuses NaN, which would otherwise switch the timeout off.
    for name, seconds in (("timeout", timeout), ("evaluator_timeout", evaluator_timeout)):
        if seconds is not None and not (seconds > 0 and math.isfinite(seconds)):
            raise ConfigError(f"{name} must be a positive number of seconds, got {seconds!r}")
    _check_isolation(isolation, memory_limit_mb)
    sandbox = sandbox_mode(sandbox, isolation)
    release = _release_for(system, isolation)
    loaded = None if policy is None else _checked_policy(policy, evaluators)
    return RunPlan(
        release=release,
        evaluators=with_judge_repeats(evaluators, judge_repeats),
        concurrency=DEFAULT_CONCURRENCY if concurrency is None else int(concurrency),
        timeout=timeout,
        confidence=confidence,
        policy=loaded,
        isolation=isolation,
        memory_limit_mb=memory_limit_mb or DEFAULT_MEMORY_LIMIT_MB,
        requested_concurrency=None if concurrency is None else int(concurrency),
        sandbox=sandbox,
        evaluator_timeout=evaluator_timeout,
        repeats=AUTO_MOST if counted == AUTO else int(counted),
        auto_repeats=counted == AUTO,
        judge_repeats=judge_repeats,
    )


def _checked_policy(policy: Any, evaluators: Sequence[Evaluator]) -> Any:
    loaded = _load_policy(policy)
    # Rules that could never pass are refused before a single case runs.
    loaded.check_declared({e.criterion: tuple(e.score_range) for e in evaluators})
    return loaded


def load_for_plan(
    plan: RunPlan, dataset: DatasetSource, split: str | None, store: Store | None = None
) -> Dataset:
    """Load the run's dataset, each case as many times as the plan repeats it (with
    `repeats: auto`, as the store's earlier runs say); a file's answers are no business
    of the system, so the sandbox hides it."""
    data = load_dataset(dataset, split=split)
    if isinstance(dataset, (str, os.PathLike)):
        plan.hidden_paths = (*plan.hidden_paths, os.fspath(dataset))
    if not plan.auto_repeats:
        return repeated_dataset(data, plan.repeats)
    tried, plan.tries, plan.evidence_runs = allocated_dataset(data, store, plan.release.name)
    return tried


def _release_for(system: Any, isolation: str) -> System:
    release = as_system(system)
    if isolation == "thread" and release.declared_travel() is not None:
        raise ConfigError(
            f"isolation='thread' runs the system in this process, but {release!r} was read "
            "from its run config in a sandbox and runs only in processes of its own: put "
            "`isolation: thread` in the config (it is then imported here), or leave "
            "isolation at 'process'"
        )
    return release


def _check_isolation(isolation: str, memory_limit_mb: int | None) -> None:
    if isolation not in ISOLATION_MODES:
        raise ValueError(
            f"isolation must be 'process' (the default: the system runs in "
            f"processes of its own) or 'thread' (in this process, for trusted "
            f"code), got {isolation!r}"
        )
    if memory_limit_mb is not None and (
        isinstance(memory_limit_mb, bool)
        or not isinstance(memory_limit_mb, int)
        or memory_limit_mb <= 0
    ):
        raise ValueError(
            f"memory_limit_mb must be a positive whole number of MiB, got {memory_limit_mb!r}"
        )


def _load_policy(policy: Any) -> Any:
    from oloproof_core.gates import load_policy

    return load_policy(policy)
