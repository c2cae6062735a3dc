"""What `repeats: auto` reads before a run: the tries of the same cases in the system's
latest finished runs (`oloproof_core.evaluation.auto_repeats`)."""

from __future__ import annotations

from datetime import datetime

import oloproof_core as engine
from metrics.selectors import runs_value_columns
from runs.models import Run
from runs.selectors.case_columns import run_case_columns
from runs.selectors.runs import runs_of_cases


def earlier_tries(
    *,
    project_id: int,
    cases_digest: str,
    system_name: str,
    source: str,
    finished_before: datetime | None = None,
) -> engine.Earlier:
    """The tries of the system's latest finished runs of the dataset (by its digest at
    any repeat count, or by its file: `engine.of_dataset`)."""
    runs = runs_of_cases(
        project_id=project_id,
        cases_digest=cases_digest,
        system_name=system_name,
        most=engine.EVIDENCE_RUNS,
        finished_before=finished_before,
        source=source,
    )
    return engine.earlier_of([_tries(run) for run in runs])


def _tries(run: Run) -> dict[str, list[str]]:
    """A run's tries: each criterion's value (not its sub-scores), from the value columns
    stored when the run concluded (a run of 100,000 cases is never made whole for this);
    from its verdicts when it has none."""
    repeated = engine.repeats_in(run.provenance or {}) > 1
    evaluators = (run.provenance or {}).get("evaluators") or []
    criteria = sorted({str(item["criterion"]) for item in evaluators if item.get("criterion")})
    stored = runs_value_columns(run_ids=[run.pk]).get(run.pk)
    if stored is not None and all(name in stored.values for name in criteria):
        columns = [stored.values[name] for name in criteria]
        return engine.column_outcomes(stored.ids, columns, repeated=repeated)
    read = run_case_columns(run=run, criteria=criteria)
    return engine.column_outcomes(
        read.ids, [read.metric_values(name) for name in criteria], repeated=repeated
    )


def earlier_runs_read(*, run: Run) -> int:
    """How many earlier runs a queued auto run's allocation read: those of its cases by its
    system finished before it was queued, at most `EVIDENCE_RUNS`."""
    if run.dataset is None or run.release is None:
        return 0
    found = runs_of_cases(
        project_id=run.project_id,
        cases_digest=run.dataset.cases_digest,
        system_name=run.release.system.name,
        most=engine.EVIDENCE_RUNS,
        finished_before=run.created_at,
        source=run.dataset.source,
    )
    return len(found)
