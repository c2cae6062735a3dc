"""Where verdicts and runs are kept: the `Store` protocol and its in-memory implementation.

The engine never imports a database; the platform injects a persistent store that
satisfies the same protocol. Reads and writes come in batches so that a store can
serve a 100,000-case run with a handful of queries.
"""

from __future__ import annotations

import threading
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from oloproof_core._util.canonical import digest_text
from oloproof_core.cases.case import CaseResult
from oloproof_core.cases.verdict import Verdict

if TYPE_CHECKING:
    from oloproof_core.evaluation.auto_repeats import Earlier
    from oloproof_core.judging.evaluators import Evaluator
    from oloproof_core.results.result import Result


@dataclass(frozen=True, slots=True)
class CacheEntry:
    key: str
    evaluator_version: str
    criterion: str
    verdict: Verdict


class Store(Protocol):
    def get_verdicts(self, keys: Collection[str]) -> Mapping[str, Verdict]:
        """The cached verdicts among `keys` (absent keys are simply not returned)."""

    def put_verdicts(self, entries: Sequence[CacheEntry]) -> None:
        """Cache successful verdicts; putting an existing key again is harmless."""

    def record_run(self, result: Result) -> str | None:
        """Keep a finished run; returns its id, or None if this store keeps no runs."""

    def find_baseline(self, system_name: str, release: str | None) -> Result | None:
        """A recorded run to compare against: of `system_name` at version `release`, or,
        with `release` None, its last approved run; None when there is none."""


@dataclass(frozen=True, slots=True)
class RunOpening:
    """What a store is told when a run it records as it goes begins: the run's provenance
    as far as it is known before the first case (the rest comes with its conclusion)."""

    system: Mapping[str, Any]
    dataset: Mapping[str, Any]
    evaluators: Sequence[Mapping[str, Any]]
    policy: Mapping[str, Any] | None
    confidence: float
    started_at: str


class RecordsAsItGoes(Protocol):
    """A store that records a run while it goes, so the run need not keep its cases.

    `run_open` creates the run (running) and returns the id this store knows it by (a
    store that opens it without waiting may give a name of its own; `run_close` returns
    the run's id either way); `run_cases_add` records a
    batch of judged cases, in dataset order from `first_position`; `run_close` records
    the conclusion (metrics, gate, provenance) and returns the id of the finished run;
    `run_abandon` marks a run that cannot finish as failed, with the reason.
    """

    def run_open(self, opening: RunOpening) -> str: ...

    def run_cases_add(
        self, run_id: str, cases: Sequence[CaseResult], first_position: int
    ) -> None: ...

    def run_close(self, run_id: str, result: Result) -> str: ...

    def run_abandon(self, run_id: str, reason: str) -> None: ...


def records_as_it_goes(store: Store) -> bool:
    return callable(getattr(store, "run_open", None))


def verdict_key(evaluator: Evaluator, case: CaseResult) -> str:
    """Cache key: the evaluator's version and the digests of exactly the parts it reads.

    A case's second and later repeats key on their repeat index as well, so a judge that
    answers differently each time is asked afresh for each repeat and no repeat reads
    another's verdict; the first keeps the key of a run without repeats."""
    parts = "|".join([case.part_digest(part) for part in evaluator.reads])
    if case.repeat > 1:
        return digest_text(f"{evaluator.version}|{parts}|repeat={case.repeat}")
    return digest_text(f"{evaluator.version}|{parts}")


class InMemoryStore:
    """Keeps verdicts and the latest runs in this process; the default when nothing is recorded.

    Only the `KEPT_RUNS` most recent results are kept (for baselines), so a long
    notebook session does not hold every run it ever made.
    """

    KEPT_RUNS = 32

    def __init__(self) -> None:
        self._verdicts: dict[str, Verdict] = {}
        self._runs: dict[str, Result] = {}
        self._recorded = 0
        self._lock = threading.Lock()

    def get_verdicts(self, keys: Collection[str]) -> dict[str, Verdict]:
        verdicts = self._verdicts
        with self._lock:
            return {key: verdicts[key] for key in keys if key in verdicts}

    def put_verdicts(self, entries: Sequence[CacheEntry]) -> None:
        # Verdicts are immutable, so the cached copy is shared by every later hit.
        cached = [(entry.key, Verdict.from_cache(entry.verdict.to_cache())) for entry in entries]
        with self._lock:
            self._verdicts.update(cached)

    def record_run(self, result: Result) -> str | None:
        with self._lock:
            self._recorded += 1
            run_id = f"mem-{self._recorded}"
            self._runs[run_id] = result
            while len(self._runs) > self.KEPT_RUNS:
                del self._runs[next(iter(self._runs))]
        return run_id

    def earlier_tries(self, cases_digest: str, system_name: str, source: str) -> Earlier:
        """The tries of this system's latest runs of the same dataset (`repeats: auto`)."""
        from oloproof_core.evaluation.auto_repeats import earlier_from, of_dataset

        with self._lock:
            runs = list(self._runs.values())
        return earlier_from(
            result
            for result in reversed(runs)
            if (result.provenance.get("system") or {}).get("name") == system_name
            and of_dataset(result.provenance, cases_digest, source)
        )

    def find_baseline(self, system_name: str, release: str | None) -> Result | None:
        """The latest recorded run of that system (at that version, if given).

        This store has no approvals, so "last approved" is the latest run.
        """
        with self._lock:
            runs = list(self._runs.values())
        for result in reversed(runs):
            system = result.provenance.get("system") or {}
            if system.get("name") != system_name:
                continue
            if release is None or str(system.get("version")) == release:
                return result
        return None

    def run(self, run_id: str) -> Result:
        return self._runs[run_id]

    def __len__(self) -> int:
        return len(self._verdicts)
