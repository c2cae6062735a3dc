"""`DjangoLedger`: the engine's optimization `Ledger` kept in the Django database."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import oloproof_core.optimize as optimize
from runs.models import Optimization, Project
from runs.selectors import optimizations as selected
from runs.store import outside_event_loop
from runs.workers.dispatch import worker_name
from runs.workers.optimization_heartbeat import Heartbeat
from runs.writers import optimization_records as records
from runs.writers.projects import project_default_ensure


class DjangoLedger:
    """Every write lands at once, so a killed worker's successor finds all of it.

    An optimization begun here runs in this process, which keeps its heartbeat until
    it is concluded (a worker's is kept by the worker: runs.workers.optimization_work).
    """

    def __init__(self, *, created_by: Any = None, project: Project | None = None) -> None:
        self.created_by = created_by
        self.project = project
        self._heartbeats: dict[str, Heartbeat] = {}

    def optimization_begin(self, *, config: Mapping[str, Any]) -> str:
        process = worker_name()
        record = outside_event_loop(
            lambda: records.optimization_create(
                project=self.project or project_default_ensure(),
                config=config,
                status=Optimization.Status.RUNNING,
                created_by=self.created_by,
                claimed_by=process,
            )
        )
        self._heartbeats[str(record.pk)] = Heartbeat(record.pk, process).start()
        return str(record.pk)

    def optimization_state(self, optimization_id: str) -> Mapping[str, Any]:
        return outside_event_loop(
            lambda: selected.optimization_state(optimization_id=int(optimization_id))
        )

    def optimization_progress(
        self, optimization_id: str, *, status: str, progress: Mapping[str, Any]
    ) -> None:
        outside_event_loop(
            lambda: records.optimization_progress_record(
                optimization_id=int(optimization_id), status=status, progress=progress
            )
        )

    def optimization_conclude(
        self, optimization_id: str, *, status: str, outcome: Mapping[str, Any]
    ) -> None:
        heartbeat = self._heartbeats.pop(optimization_id, None)
        if heartbeat is not None:
            heartbeat.stop()
        outside_event_loop(
            lambda: records.optimization_conclude_record(
                optimization_id=int(optimization_id), status=status, outcome=outcome
            )
        )

    def evaluations(self, optimization_id: str) -> list[optimize.EvaluationRecord]:
        return outside_event_loop(
            lambda: selected.evaluations_list(optimization_id=int(optimization_id))
        )

    def evaluations_add(
        self, optimization_id: str, records_: Sequence[optimize.EvaluationRecord]
    ) -> None:
        outside_event_loop(
            lambda: records.evaluations_record(
                optimization_id=int(optimization_id), records=records_
            )
        )

    def reflections(self, optimization_id: str) -> list[optimize.ReflectionRecord]:
        return outside_event_loop(
            lambda: selected.reflections_list(optimization_id=int(optimization_id))
        )

    def reflection_add(self, optimization_id: str, record: optimize.ReflectionRecord) -> None:
        outside_event_loop(
            lambda: records.reflection_record(optimization_id=int(optimization_id), record=record)
        )

    def candidates(self, optimization_id: str) -> list[optimize.CandidateRecord]:
        return outside_event_loop(
            lambda: selected.candidate_records(optimization_id=int(optimization_id))
        )

    def candidate_add(self, optimization_id: str, record: optimize.CandidateRecord) -> None:
        outside_event_loop(
            lambda: records.candidate_record(optimization_id=int(optimization_id), record=record)
        )

    def __repr__(self) -> str:
        return "<DjangoLedger>"
