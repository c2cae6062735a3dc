"""An optimization's ledger kept by the local store's process.

`oloproof optimize` and `optimize()` record candidates, evaluations and reflections in
the project's store. Kept in this process, that meant setting Django up here (0.2 -
0.4 s, most of it CPU under the interpreter's lock) before the search could begin;
the store's own process (`oloproof._store_process`) sets it up beside the command
instead, as it does for `oloproof run`, and keeps the ledger there with `DjangoLedger`,
the ledger's one writer. Each call waits for its answer, so a failure is raised where
the call was made.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from oloproof._store_process import StoreProcess
    from oloproof_core.optimize import CandidateRecord, EvaluationRecord, ReflectionRecord


class StoreProcessLedger:
    """The `Ledger` protocol over the local store's process."""

    def __init__(self, store: StoreProcess) -> None:
        self._store = store

    def optimization_begin(self, *, config: Mapping[str, Any]) -> str:
        begun: str = self._store.ledger_call("optimization_begin", config=dict(config))
        return begun

    def optimization_state(self, optimization_id: str) -> Mapping[str, Any]:
        state: Mapping[str, Any] = self._store.ledger_call("optimization_state", optimization_id)
        return state

    def optimization_progress(
        self, optimization_id: str, *, status: str, progress: Mapping[str, Any]
    ) -> None:
        self._store.ledger_call(
            "optimization_progress", optimization_id, status=status, progress=dict(progress)
        )

    def optimization_conclude(
        self, optimization_id: str, *, status: str, outcome: Mapping[str, Any]
    ) -> None:
        self._store.ledger_call(
            "optimization_conclude", optimization_id, status=status, outcome=dict(outcome)
        )

    def evaluations(self, optimization_id: str) -> list[EvaluationRecord]:
        kept: list[EvaluationRecord] = self._store.ledger_call("evaluations", optimization_id)
        return kept

    def evaluations_add(self, optimization_id: str, records: Sequence[EvaluationRecord]) -> None:
        self._store.ledger_call("evaluations_add", optimization_id, list(records))

    def reflections(self, optimization_id: str) -> list[ReflectionRecord]:
        kept: list[ReflectionRecord] = self._store.ledger_call("reflections", optimization_id)
        return kept

    def reflection_add(self, optimization_id: str, record: ReflectionRecord) -> None:
        self._store.ledger_call("reflection_add", optimization_id, record)

    def candidates(self, optimization_id: str) -> list[CandidateRecord]:
        kept: list[CandidateRecord] = self._store.ledger_call("candidates", optimization_id)
        return kept

    def candidate_add(self, optimization_id: str, record: CandidateRecord) -> None:
        self._store.ledger_call("candidate_add", optimization_id, record)

    def __repr__(self) -> str:
        return f"<ledger kept by {self._store!r}>"
