"""What every engine gets to search with, and how each candidate it finds is recorded."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from oloproof_core.cases.case import CaseResult
from oloproof_core.datasets.rows import Dataset
from oloproof_core.evaluation.conclusion import conclude_run
from oloproof_core.evaluation.plan import plan_run
from oloproof_core.execution.systems import System
from oloproof_core.judging.evaluators import Evaluator
from oloproof_core.optimize._artifact import Artifact
from oloproof_core.optimize._budget import Meter
from oloproof_core.optimize._candidates import Evaluations, candidate_digest, total_cost
from oloproof_core.optimize._ledger import CandidateRecord, Ledger
from oloproof_core.optimize._reflection import Reflector
from oloproof_core.optimize._splits import Splits
from oloproof_core.results.result import Result
from oloproof_core.results.store import Store


@dataclass
class Search:
    """An engine's inputs: the splits it may see, the evaluator, the reflector, the meter."""

    artifact: Artifact
    splits: Splits
    evaluators: list[Evaluator]
    evaluations: Evaluations
    reflector: Reflector
    meter: Meter
    recorder: CandidateRecorder
    settings: dict[str, Any]
    seed: int = 0
    notes: list[str] = field(default_factory=list)
    failure: Exception | None = None
    """What stopped the search where the engine could not raise it (in its callbacks)."""

    def halt(self, error: Exception) -> None:
        """Stop the search with `error`: the engine's stop condition sees it, and the
        optimization fails with it once the engine returns (its first, if several)."""
        if self.failure is None:
            self.failure = error

    def raise_if_halted(self) -> None:
        if self.failure is not None:
            raise self.failure


class CandidateRecorder:
    """Records each candidate once its val evaluation is complete, with its val run."""

    def __init__(
        self,
        *,
        ledger: Ledger,
        optimization_id: str,
        evaluations: Evaluations,
        reflector: Reflector,
        store: Store,
        val_dataset: Dataset,
        confidence: float,
        on_candidate: Callable[[CandidateRecord], None] | None = None,
        repeats: int = 1,
        judge_repeats: int = 1,
    ) -> None:
        self.ledger, self.optimization_id = ledger, optimization_id
        self.evaluations, self.reflector, self.store = evaluations, reflector, store
        self.val_dataset, self.confidence = val_dataset, confidence
        self.repeats, self.judge_repeats = repeats, judge_repeats
        self.on_candidate = on_candidate
        self._kept = {record.digest: record for record in ledger.candidates(optimization_id)}

    def recorded(self) -> list[CandidateRecord]:
        return sorted(self._kept.values(), key=lambda record: record.index)

    def index_of(self, texts: Mapping[str, str]) -> int:
        return self.evaluations.index_of(texts)

    def record(
        self,
        texts: Mapping[str, str],
        *,
        parents: Sequence[int],
        origin: str,
        cases: list[CaseResult] | None = None,
        charge: bool = True,
    ) -> CandidateRecord:
        digest = candidate_digest(texts)
        if digest in self._kept:
            return self._kept[digest]
        if cases is None:
            cases = self.evaluations.evaluate(texts, self.val_dataset.rows, charge=charge)
        release = self.evaluations.release(texts)
        result = self._val_result(release, cases, self.evaluations.index_of(texts))
        estimate = result.metric(self.evaluations.objective)
        latencies = [case.latency_ms for case in cases if case.latency_ms is not None]
        record = CandidateRecord(
            index=self.evaluations.index_of(texts),
            digest=digest,
            version=release.version or "",
            texts=dict(texts),
            parents=tuple(parents),
            origin=origin,
            val={
                "metric": estimate.metric,
                "estimate": estimate.estimate,
                "lower": estimate.interval.lower,
                "upper": estimate.interval.upper,
                "n": estimate.n_observed,
                "n_missing": estimate.n_missing,
            },
            cost_usd=total_cost(cases),
            latency_ms=sum(latencies) / len(latencies) if latencies else None,
            reflection=self.reflector.proposal_for(digest),
            val_run_id=self.store.record_run(result),
            budget_used=self.evaluations.meter.used().to_dict(),
        )
        self.ledger.candidate_add(self.optimization_id, record)
        self._kept[digest] = record
        if self.on_candidate is not None:
            self.on_candidate(record)
        return record

    def _val_result(self, release: System, cases: list[CaseResult], index: int) -> Result:
        """The candidate's val evaluation as a run of its release (aggregated, with intervals)."""
        plan = plan_run(
            system=release,
            evaluators=self.evaluations.evaluators,
            confidence=self.confidence,
            repeats=self.repeats,
            judge_repeats=self.judge_repeats,
        )
        result = conclude_run(
            plan, cases, self.val_dataset, self.store, started_at=datetime.now(UTC), duration_s=0.0
        )
        result.provenance["optimization"] = {
            "id": self.optimization_id,
            "split": "val",
            "candidate": index,
        }
        return result


def best_candidate(records: Sequence[CandidateRecord]) -> CandidateRecord:
    """The highest val estimate; ties go to the earlier candidate (the seed first)."""
    return max(records, key=lambda record: (record.val.get("estimate") or 0.0, -record.index))
