"""One pool of system processes, and one metering gateway, for a whole optimization.

Every candidate is the seed's function reading other texts, so the processes that ran
one candidate can run the next. Starting a pool per evaluation paid, each time, a
fresh interpreter, the system's imports (its model client among them), its warm-up
and a gateway; an optimization makes dozens of evaluations. The first evaluation that
runs in processes opens the pool; every later one, the proof on test included, leases
it (`PoolLease`): its cases run with its candidate's texts, bound in each process once,
and it stays a run of its own (its release and version, its judging, its provenance).
The evaluators' processes (`keep_judging`) are shared the same way: started once, on the
first verdict not cached, for every evaluation.

A release that is not the pool's function with other texts (a DSPy program's copy)
gets no lease and runs as any run does.
"""

from __future__ import annotations

import os
from contextlib import ExitStack
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from oloproof_core.evaluation.plan import RunPlan
from oloproof_core.evaluation.run import open_pool
from oloproof_core.execution.isolation import DEFAULT_MEMORY_LIMIT_MB, MeteredPool, sandbox_mode
from oloproof_core.execution.isolation._lease import PoolLease

if TYPE_CHECKING:
    from oloproof_core.judging.contained import ContainedJudging
    from oloproof_core.optimize._spec import OptimizationSpec


@dataclass(frozen=True)
class Shielding:
    """What every evaluation's processes get, whatever plan asked: the config's sandbox
    and memory settings, and the dataset's file hidden (its answers are no business of
    the system, in the search or on test)."""

    sandbox: str | None = None
    memory_limit_mb: int | None = None
    hidden: tuple[str, ...] = ()

    @classmethod
    def of(cls, spec: OptimizationSpec) -> Shielding:
        dataset = spec.dataset
        hidden = (os.fspath(dataset),) if isinstance(dataset, (str, os.PathLike)) else ()
        return cls(spec.sandbox, spec.memory_limit_mb, hidden)

    def apply(self, plan: RunPlan) -> None:
        plan.sandbox = sandbox_mode(self.sandbox, plan.isolation)
        plan.memory_limit_mb = self.memory_limit_mb or DEFAULT_MEMORY_LIMIT_MB
        plan.hidden_paths = tuple(dict.fromkeys((*plan.hidden_paths, *self.hidden)))


class CandidatePool:
    """Lends one pool to the run plans of an optimization's evaluations; see the module."""

    def __init__(self, *, cases: int, shielding: Shielding | None = None) -> None:
        self._cases = cases
        self._shielding = shielding or Shielding()
        self._stack = ExitStack()
        self._pool: MeteredPool | None = None
        self._judging: ContainedJudging | None = None

    def lend(self, plan: RunPlan) -> RunPlan:
        """`plan`, holding a lease on the pool when its release can share it."""
        if plan.pool is not None:
            return plan
        self._shielding.apply(plan)
        if self._pool is None:
            # A plan of its own opens the pool, so no evaluation's plan is the pool's.
            opening = replace(plan, pool=None)
            self._stack.enter_context(open_pool(opening, cases=self._cases))
            if not isinstance(opening.pool, MeteredPool):  # it runs in threads
                return plan
            self._pool, self._judging = opening.pool, opening.judging
            if self._judging is not None:  # every evaluation asks for verdicts
                self._judging.launch(plan.evaluators)
        if _shares(self._pool, plan):
            plan.pool = PoolLease(self._pool, plan.release)
            plan.judging = plan.judging or self._judging
        return plan

    def close(self) -> None:
        """Stop the processes and the gateway."""
        self._pool = self._judging = None
        self._stack.close()

    def __enter__(self) -> CandidatePool:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


def _shares(pool: MeteredPool, plan: RunPlan) -> bool:
    """Whether the plan's release is the pool's function, run the same way."""
    processes = pool.pool
    return (
        plan.release.inner is processes.system.inner
        and plan.timeout == processes.timeout
        and plan.memory_limit_mb == processes.memory_limit_mb
    )
