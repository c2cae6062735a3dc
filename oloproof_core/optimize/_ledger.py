"""What an optimization records as it goes, and reads back when a worker resumes it.

The `Ledger` protocol is to an optimization what `Store` is to a run: the engine
writes through it and never imports a database. Every (candidate, case) evaluation,
every reflection (prompt and reply) and every candidate is kept as soon as it
exists, so an optimization whose worker was killed resumes by replaying them: the
search retraces its steps without running the system, judging a case or asking
the reflection model again, and goes on from where it stopped.
"""

from __future__ import annotations

import itertools
import threading
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any, Protocol


@dataclass(frozen=True, slots=True)
class EvaluationRecord:
    """One candidate's result on one case: the case's `to_dict()` without its row."""

    candidate: str
    case_id: str
    split: str
    data: Mapping[str, Any]


@dataclass(frozen=True, slots=True)
class ReflectionRecord:
    prompt_digest: str
    occurrence: int
    component: str
    prompt: str
    reply: str
    cost_usd: float | None


@dataclass(frozen=True, slots=True)
class CandidateRecord:
    """A candidate as recorded: its release, lineage, texts and figures on val."""

    index: int
    digest: str
    version: str
    texts: Mapping[str, str]
    parents: tuple[int, ...]
    origin: str
    """"seed", "reflection" or "merge"."""
    val: Mapping[str, Any]
    """{"metric", "estimate", "lower", "upper", "n", "n_missing"} of the objective on val."""
    cost_usd: float | None
    latency_ms: float | None
    reflection: Mapping[str, Any] | None = None
    val_run_id: str | None = None
    budget_used: Mapping[str, Any] | None = None
    """The optimization's budget used when the candidate was recorded (`BudgetUsed.to_dict`):
    where it lands on a chart of score against budget spent."""

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["parents"] = list(self.parents)
        return data

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> CandidateRecord:
        return cls(
            index=int(data["index"]),
            digest=str(data["digest"]),
            version=str(data["version"]),
            texts=dict(data.get("texts") or {}),
            parents=tuple(data.get("parents") or ()),
            origin=str(data["origin"]),
            val=dict(data.get("val") or {}),
            cost_usd=data.get("cost_usd"),
            latency_ms=data.get("latency_ms"),
            reflection=data.get("reflection"),
            val_run_id=data.get("val_run_id"),
            budget_used=data.get("budget_used"),
        )


class Ledger(Protocol):
    def optimization_begin(self, *, config: Mapping[str, Any]) -> str:
        """A new optimization's id."""

    def optimization_state(self, optimization_id: str) -> Mapping[str, Any]:
        """What was kept of it so far: {"status", "budget_used", ...} (empty when new)."""

    def optimization_progress(
        self, optimization_id: str, *, status: str, progress: Mapping[str, Any]
    ) -> None:
        """Note the status, the budget used and where the search is."""

    def optimization_conclude(
        self, optimization_id: str, *, status: str, outcome: Mapping[str, Any]
    ) -> None:
        """Keep the outcome: winner, test runs, comparison and gate (or why it failed)."""

    def evaluations(self, optimization_id: str) -> list[EvaluationRecord]: ...

    def evaluations_add(self, optimization_id: str, records: Sequence[EvaluationRecord]) -> None:
        """Keep evaluations; one already kept for the same candidate and case is left as is."""

    def reflections(self, optimization_id: str) -> list[ReflectionRecord]: ...

    def reflection_add(self, optimization_id: str, record: ReflectionRecord) -> None: ...

    def candidates(self, optimization_id: str) -> list[CandidateRecord]: ...

    def candidate_add(self, optimization_id: str, record: CandidateRecord) -> None:
        """Keep a candidate; one already kept with the same index is left as is."""


@dataclass
class _Kept:
    config: dict[str, Any]
    state: dict[str, Any] = field(default_factory=dict)
    evaluations: dict[tuple[str, str], EvaluationRecord] = field(default_factory=dict)
    reflections: dict[tuple[str, int], ReflectionRecord] = field(default_factory=dict)
    candidates: dict[int, CandidateRecord] = field(default_factory=dict)


class InMemoryLedger:
    """The ledger of optimizations run in this process (the library's default)."""

    def __init__(self) -> None:
        self._kept: dict[str, _Kept] = {}
        self._ids = itertools.count(1)
        self._lock = threading.Lock()

    def optimization_begin(self, *, config: Mapping[str, Any]) -> str:
        with self._lock:
            optimization_id = str(next(self._ids))
            self._kept[optimization_id] = _Kept(config=dict(config))
        return optimization_id

    def optimization_state(self, optimization_id: str) -> Mapping[str, Any]:
        with self._lock:
            return dict(self._kept[optimization_id].state)

    def optimization_progress(
        self, optimization_id: str, *, status: str, progress: Mapping[str, Any]
    ) -> None:
        with self._lock:
            self._kept[optimization_id].state.update(status=status, **progress)

    def optimization_conclude(
        self, optimization_id: str, *, status: str, outcome: Mapping[str, Any]
    ) -> None:
        with self._lock:
            self._kept[optimization_id].state.update(status=status, outcome=dict(outcome))

    def evaluations(self, optimization_id: str) -> list[EvaluationRecord]:
        with self._lock:
            return list(self._kept[optimization_id].evaluations.values())

    def evaluations_add(self, optimization_id: str, records: Sequence[EvaluationRecord]) -> None:
        with self._lock:
            kept = self._kept[optimization_id].evaluations
            for record in records:
                kept.setdefault((record.candidate, record.case_id), record)

    def reflections(self, optimization_id: str) -> list[ReflectionRecord]:
        with self._lock:
            return list(self._kept[optimization_id].reflections.values())

    def reflection_add(self, optimization_id: str, record: ReflectionRecord) -> None:
        with self._lock:
            key = (record.prompt_digest, record.occurrence)
            self._kept[optimization_id].reflections.setdefault(key, record)

    def candidates(self, optimization_id: str) -> list[CandidateRecord]:
        with self._lock:
            kept = self._kept[optimization_id].candidates
            return [kept[index] for index in sorted(kept)]

    def candidate_add(self, optimization_id: str, record: CandidateRecord) -> None:
        with self._lock:
            self._kept[optimization_id].candidates.setdefault(record.index, record)
