"""Candidates and their evaluations: each (candidate, case) run and judged once.

A candidate is a set of component texts. Its digest (SHA-256 of the canonical
texts) identifies it: the same texts proposed twice are the same candidate, with
the same release version `<base>+opt<optimization>.<n>`, and are evaluated once.
Evaluations go through the engine's run functions (`plan_run`, `process_rows`),
so a candidate is run the way any release is (measured time and cost, the
verdict cache, the isolation the run plan asks for) and recorded in the ledger
as soon as it is judged; a resumed optimization reads them back instead. An
evaluation whose metric broke its contract stops the search (`MetricContractError`). Their
system processes are the optimization's (`CandidatePool`), started once.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from oloproof_core._util.canonical import canonical_json, digest_text
from oloproof_core.cases.case import CaseError, CaseResult
from oloproof_core.cases.observations import ModelCall
from oloproof_core.cases.verdict import Verdict
from oloproof_core.datasets.rows import Row
from oloproof_core.errors import OloproofError
from oloproof_core.evaluation.plan import plan_run
from oloproof_core.evaluation.run import process_rows
from oloproof_core.execution.systems import System
from oloproof_core.judging.evaluators import Evaluator
from oloproof_core.optimize._budget import Meter
from oloproof_core.optimize._contract import contract_failure
from oloproof_core.optimize._ledger import EvaluationRecord, Ledger
from oloproof_core.optimize._shared_pool import CandidatePool
from oloproof_core.results.store import Store

MakeRelease = Callable[[Mapping[str, str], str], System]
"""Builds the system that reads the given texts, at the given version."""


class SealedSplitError(OloproofError):
    """The search asked to evaluate a case it must not see (a test case)."""


def candidate_digest(texts: Mapping[str, str]) -> str:
    return digest_text(canonical_json(dict(texts)))


def release_version(base: str | None, optimization_id: str, index: int) -> str:
    return f"{base or '0'}+opt{optimization_id}.{index}"


@dataclass(slots=True)
class EvaluationCounts:
    run: int = 0
    """(candidate, case) pairs the system ran on and that were judged."""
    served: int = 0
    """Pairs asked for again and served from this optimization's records."""
    replayed: int = 0
    """Pairs read back from the ledger by a resumed optimization."""

    @property
    def asked(self) -> int:
        return self.run + self.served


class Evaluations:
    """Evaluates candidates on the cases the search may see, once per (candidate, case)."""

    def __init__(
        self,
        *,
        make_release: MakeRelease,
        base_version: str | None,
        evaluators: Sequence[Evaluator],
        objective: str,
        store: Store,
        ledger: Ledger,
        optimization_id: str,
        meter: Meter,
        open_rows: Mapping[str, Sequence[Row]],
        concurrency: int | None,
        timeout: float | None,
        pool: CandidatePool | None = None,
        judge_repeats: int = 1,
    ) -> None:
        self.make_release, self.base_version = make_release, base_version
        self.judge_repeats = judge_repeats
        self.evaluators, self.objective = list(evaluators), objective
        self.store, self.ledger, self.optimization_id = store, ledger, optimization_id
        self.meter, self.concurrency, self.timeout = meter, concurrency, timeout
        self.pool = pool
        self._split_of = {row.id: split for split, rows in open_rows.items() for row in rows}
        self._rows = {row.id: row for rows in open_rows.values() for row in rows}
        self._indices: dict[str, int] = {}
        self._memo: dict[tuple[str, str], CaseResult] = {}
        self._lock = threading.Lock()
        self.counts = EvaluationCounts()
        for record in ledger.evaluations(optimization_id):
            row = self._rows.get(record.case_id)
            if row is not None:
                self._memo[(record.candidate, record.case_id)] = case_from_record(row, record.data)
                self.counts.replayed += 1

    def index_of(self, texts: Mapping[str, str]) -> int:
        """The candidate's number in this optimization (the seed is 0), given on first sight."""
        digest = candidate_digest(texts)
        with self._lock:
            return self._indices.setdefault(digest, len(self._indices))

    def version_of(self, texts: Mapping[str, str]) -> str:
        return release_version(self.base_version, self.optimization_id, self.index_of(texts))

    def release(self, texts: Mapping[str, str]) -> System:
        return self.make_release(texts, self.version_of(texts))

    def evaluate(
        self, texts: Mapping[str, str], rows: Sequence[Row], *, charge: bool = True
    ) -> list[CaseResult]:
        """The candidate's judged cases for `rows`, running only those not evaluated yet
        (`charge=False`: outside the budget, the seed's when a limit struck first)."""
        sealed = [row.id for row in rows if row.id not in self._rows]
        if sealed:
            raise SealedSplitError(
                f"the search asked for case {sealed[0]!r}, which is not in "
                "train or val: the test split stays unseen until the end"
            )
        digest = candidate_digest(texts)
        self.index_of(texts)
        pending = [row for row in rows if (digest, row.id) not in self._memo]
        # Every case asked for is a metric call, served from the records or not.
        if charge:
            self.meter.take(len(rows))
        self.counts.served += len(rows) - len(pending)
        if pending:
            plan = plan_run(
                system=self.release(texts),
                evaluators=self.evaluators,
                concurrency=self.concurrency,
                timeout=self.timeout,
                judge_repeats=self.judge_repeats,
            )
            if self.pool is not None:
                plan = self.pool.lend(plan)
            cases = process_rows(plan, pending, self.store)
            self.meter.charge_costs(cases)
            self.counts.run += len(cases)
            self.ledger.evaluations_add(
                self.optimization_id,
                [
                    EvaluationRecord(
                        candidate=digest,
                        case_id=case.id,
                        split=self._split_of[case.id],
                        data=case_record(case),
                    )
                    for case in cases
                ],
            )
            for case in cases:
                self._memo[(digest, case.id)] = case
            broken = contract_failure(cases)
            if broken is not None:
                raise broken
        return [self._memo[(digest, row.id)] for row in rows]

    def known(self, texts: Mapping[str, str], rows: Sequence[Row]) -> list[CaseResult] | None:
        """The candidate's cases for `rows` if every one is evaluated already, else None."""
        digest = candidate_digest(texts)
        found = [self._memo.get((digest, row.id)) for row in rows]
        return None if any(case is None for case in found) else [c for c in found if c]

    def score(self, case: CaseResult) -> float:
        """The objective's value for the search; a missing verdict scores 0."""
        verdict = case.verdicts.get(self.objective)
        return 0.0 if verdict is None or verdict.value is None else float(verdict.value)

    def feedback(self, case: CaseResult) -> str:
        if case.error is not None:
            return f"The system failed on this case: {case.error}"
        parts = []
        for criterion, verdict in case.verdicts.items():
            text = verdict.feedback or verdict.error or ""
            scores = ", ".join(f"{name} {value:g}" for name, value in verdict.scores.items())
            parts.append(
                f"{criterion}: {verdict.value if verdict.value is not None else 'missing'}"
                + (f" ({scores})" if scores else "")
                + (f". {text}" if text else "")
            )
        return "\n".join(parts)

    def objectives(self, case: CaseResult) -> dict[str, float]:
        """Every criterion and sub-score as its own objective (for Pareto fronts)."""
        values: dict[str, float] = {}
        for criterion, verdict in case.verdicts.items():
            values[criterion] = 0.0 if verdict.value is None else float(verdict.value)
            for name, value in verdict.scores.items():
                values[f"{criterion}.{name}"] = float(value)
        return values


def case_record(case: CaseResult) -> dict[str, Any]:
    data = case.to_dict()
    for key in ("id", "input", "expected", "split", "cluster", "cost_usd"):
        data.pop(key, None)
    return data


def case_from_record(row: Row, data: Mapping[str, Any]) -> CaseResult:
    """A judged case rebuilt from its record, as it was when it was judged."""
    case = CaseResult.from_row(row)
    error = data.get("error")
    if error:
        case.error = CaseError(
            type=error["type"], message=error["message"], traceback=error.get("traceback", "")
        )
    else:
        case.output = data.get("output")
        case.output_json = canonical_json(case.output)
    case.measurements.latency_ms = data.get("latency_ms")
    case.measurements.model_calls = [ModelCall(**call) for call in data.get("model_calls") or []]
    case.artifacts = dict(data.get("artifacts") or {})
    case.verdicts = {
        name: Verdict(
            value=item.get("value"),
            feedback=item.get("feedback"),
            scores=dict(item.get("scores") or {}),
            error=item.get("error"),
            cached=bool(item.get("cached")),
        )
        for name, item in (data.get("verdicts") or {}).items()
    }
    return case


def total_cost(cases: Sequence[CaseResult]) -> float | None:
    """Every model call the cases made (system, metric, judge); None if one was unpriced."""
    total = 0.0
    for case in cases:
        for call in case.measurements.model_calls:
            if call.cost_usd is None:
                return None
            total += call.cost_usd
    return total
