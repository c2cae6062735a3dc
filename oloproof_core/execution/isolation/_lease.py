"""One run's share of a pool that several runs use in turn (an optimization's candidates).

The run's cases go to the pool's processes as the run's own release (`_bindings`:
each process binds its texts once, off every case's clock), and the run's provenance
tells only of its own cases: the restarts, the cases run again alone, the model calls
no case claimed while its cases ran and the calls cut, not the other runs'. What the pool is (its
processes, how they were started, the gateway) is the pool's, and says so.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from oloproof_core.cases.case import CaseResult
from oloproof_core.execution.isolation._metered import MeteredPool, MeterTally
from oloproof_core.execution.running import ProgressCallback
from oloproof_core.execution.systems import System

SHARED = (
    "shared with other releases of this system, started once: its processes ran this "
    "run's cases with this release's texts"
)


class PoolLease:
    """`release` running on `pool`; a run plan holds it where it would hold its own pool."""

    def __init__(self, pool: MeteredPool, release: System) -> None:
        self.pool, self.release = pool, release
        self._restarts = 0
        self._retried: dict[str, Any] | None = None
        self._tally = MeterTally()

    def launch(self, processes: int | None = None) -> None:
        self.pool.launch(processes)

    def start(self, processes: int | None = None) -> None:
        self.pool.start(processes)

    def run(self, cases: Sequence[CaseResult], progress: ProgressCallback | None = None) -> None:
        before = self.pool.pool.describe()
        self._tally.add(self.pool.run(cases, progress, release=self.release))
        after = self.pool.pool.describe()
        self._restarts += after["restarts"] - before["restarts"]
        self._retried = _retried_since(self._retried, before.get("retried"), after.get("retried"))

    def describe(self) -> dict[str, Any]:
        described = self.pool.describe()
        described["restarts"] = self._restarts
        if "retried" in described:
            described["retried"] = self._retried
        self._tally.describe(described)
        described["pool"] = SHARED
        return described


def _retried_since(
    kept: dict[str, Any] | None, before: dict[str, Any] | None, after: dict[str, Any] | None
) -> dict[str, Any] | None:
    """This lease's cases run again alone so far: what `after` adds to `before`."""
    if not after or (before and after["cases"] == before["cases"]):
        return kept
    earlier = before["cases"] if before else 0
    ids = list(after["ids"])[len(before["ids"]) if before else 0 :]
    if kept is None:
        return {**after, "cases": after["cases"] - earlier, "ids": ids}
    return {**kept, "cases": kept["cases"] + after["cases"] - earlier, "ids": kept["ids"] + ids}
