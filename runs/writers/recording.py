"""The one writer of a run's tables: releases, datasets, runs, case results, metrics, gates.

In-process recording, submitting, the workers and the demo all write through these
functions, so a run's rows are shaped in one place; and a run is deleted here. Writes
are bulk writes in fixed-size batches, never one per case.
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.contrib.auth.models import User as Account
from django.db import transaction
from django.db.models import F
from django.utils import timezone

import oloproof_core as engine
from metrics.bulk_rows import rows_insert
from metrics.services import (
    case_verdicts_create,
    evaluators_ensure,
    metric_estimates_create,
    run_value_columns_put,
)
from runs.errors import InvalidRequestError
from runs.models import CaseResult, Dataset, Gate, Project, Release, Run, System
from runs.models.case_rows import (
    CASE_RESULT_COLUMNS,
    OUTCOME_COUNTS_ZERO,
    case_result_rows,
    outcome_increments,
)
from runs.selectors.case_columns import stored_case_ids_query
from runs.writers.dataset_recording import (
    dataset_cases_create,
    dataset_get_or_create,
    dataset_of_result,
    dataset_unfilled,
)
from runs.writers.projects import project_default_ensure
from runs.writers.run_fields import finished_run_fields, parse_time, policy_fields
from runs.writers.search_rows import search_rows_add
from runs.writers.transcripts import case_transcripts_create

logger = logging.getLogger(__name__)


def batch_size_or_default(batch_size: int | None) -> int:
    return batch_size or int(getattr(settings, "OLOPROOF_RECORD_CHUNK_SIZE", 2000))


def release_get_or_create(*, project: Project, system_name: str, version: str | None) -> Release:
    system, _ = System.objects.get_or_create(project=project, name=system_name)
    release, _ = Release.objects.get_or_create(system=system, version=version or "")
    return release


def case_results_create(
    *,
    run_id: int,
    cases: Sequence[engine.CaseResult],
    pass_fail: frozenset[str],
    first_position: int = 0,
    batch_size: int | None = None,
    new_run: bool = False,
    new_rows: bool = False,
) -> int:
    """Record what the system did on each case; a case already recorded for the run is kept.

    The (run, case_id) unique constraint plus skipping conflicts is what makes a
    retried or duplicated chunk of work harmless. `new_run`: the run was created in
    this transaction, so no row can collide and the rows go straight in; `new_rows`:
    the run records as it goes and these cases are new to it, likewise. The new rows
    are then added to SQLite's search index (runs.writers.search_rows).
    """
    outcomes: Counter[str] = Counter()
    sent = rows_insert(
        model=CaseResult,
        columns=CASE_RESULT_COLUMNS,
        rows=case_result_rows(run_id, cases, pass_fail, first_position, counts=outcomes),
        ignore_conflicts=not (new_run or new_rows),
        batch_size=batch_size_or_default(batch_size),
    )
    if outcomes:  # counted as sent, like `cases_done`: a chunk's rows are written once
        Run.objects.filter(pk=run_id).update(**outcome_increments(outcomes))
    case_transcripts_create(run_id=run_id, cases=cases, new_rows=new_run or new_rows)
    search_rows_add(
        run_id=run_id,
        case_ids=None if new_run else [case.id for case in cases],
        new_run=new_run or new_rows,
    )
    return sent


def gate_record(*, run: Run, gate: Mapping[str, Any], decided_at: datetime | None = None) -> Gate:
    """Keep the policy's decision on a run (replacing an earlier one for the same run)."""
    outcome = gate.get("outcome")
    if outcome not in Gate.Outcome.values:
        raise InvalidRequestError(
            f"gate outcome must be one of {', '.join(Gate.Outcome.values)}, got {outcome!r}"
        )
    record, _ = Gate.objects.update_or_create(
        run=run,
        defaults={
            "outcome": outcome,
            "summary": str(gate.get("summary") or ""),
            "rules": list(gate.get("rules") or []),
            "decided_at": decided_at or timezone.now(),
        },
    )
    return record


def pass_fail_criteria(descriptions: Iterable[Mapping[str, Any]]) -> frozenset[str]:
    return frozenset(
        item["criterion"] for item in descriptions if item.get("value_type") == "pass_fail"
    )


def run_record(
    *,
    result: engine.Result,
    created_by: Account | None = None,
    batch_size: int | None = None,
    project: Project | None = None,
) -> Run:
    """Keep a finished run: release, dataset (once), cases, verdicts, metrics and gate.

    One transaction; each table is written in batches of `batch_size` cases. The run
    lands in `project`, by default the `default` project.
    """
    provenance = result.provenance
    system_info = provenance.get("system") or {}
    size = batch_size_or_default(batch_size)
    with transaction.atomic():
        project = project or project_default_ensure()
        release = release_get_or_create(
            project=project,
            system_name=str(system_info.get("name") or "unnamed"),
            version=system_info.get("version"),
        )
        dataset = dataset_of_result(result, batch_size=size)
        finished_at = parse_time(provenance.get("finished_at"))
        run = Run.objects.create(
            project=project,
            release=release,
            dataset=dataset,
            created_by=created_by,
            **OUTCOME_COUNTS_ZERO,
            **finished_run_fields(result, finished_at),
        )
        pass_fail = pass_fail_criteria(provenance.get("evaluators") or [])
        case_results_create(
            run_id=run.pk, cases=result.cases, pass_fail=pass_fail, batch_size=size, new_run=True
        )
        case_verdicts_create(run_id=run.pk, cases=result.cases, batch_size=size, new_run=True)
        _metrics_and_gate_record(run, result, _gate_dict(result), decided_at=finished_at)
    return run


def _metrics_and_gate_record(
    run: Run,
    result: engine.Result,
    gate: Mapping[str, Any] | None,
    *,
    decided_at: datetime | None,
) -> None:
    evaluators = evaluators_ensure(descriptions=result.provenance.get("evaluators") or [])
    metric_estimates_create(run_id=run.pk, metrics=result.metrics, evaluators=evaluators)
    ids_query = stored_case_ids_query(run_id=run.pk, result=result)
    run_value_columns_put(run_id=run.pk, result=result, case_ids_query=ids_query)
    if gate is not None:
        gate_record(run=run, gate=gate, decided_at=decided_at)


def _gate_dict(result: engine.Result) -> Mapping[str, Any] | None:
    gate = result.gate.to_dict() if result.gate is not None else result.extras.get("gate")
    return gate if isinstance(gate, Mapping) else None


def run_open_record(
    *,
    opening: engine.RunOpening,
    created_by: Account | None = None,
    project: Project | None = None,
) -> tuple[Run, bool]:
    """A run that records its cases batch by batch (`chunk_cases_record`), created running
    with its release and dataset; True beside it when the dataset's rows must come with
    the batches (a dataset new here, or one such a run left unfinished)."""
    info = opening.dataset
    split = info.get("split")
    with transaction.atomic():
        project = project or project_default_ensure()
        release = release_get_or_create(
            project=project,
            system_name=str(opening.system.get("name") or "unnamed"),
            version=opening.system.get("version"),
        )
        dataset = dataset_get_or_create(
            digest=str(info["digest"]),
            source=str(info.get("source") or "<unknown>"),
            splits=info.get("splits") or {},
            cases=(),
            n_cases=int(info["n_cases"]),
            unrepeated_digest=str(info.get("unrepeated_digest") or ""),
        )
        run = run_queued_create(
            project=project,
            config={
                "system": opening.system.get("import_path"),
                **({"split": split} if split else {}),
            },
            confidence=opening.confidence,
            created_by=created_by,
            dataset=dataset,
            release=release,
            policy=opening.policy,
        )
        run_started(run_id=run.pk, release=release, dataset=dataset)
        unfilled = dataset_unfilled(dataset)
    run.refresh_from_db()
    return run, unfilled


# Runs that the workers execute ------------------------------------------------------


def run_queued_create(
    *,
    project: Project,
    config: Mapping[str, Any],
    confidence: float,
    created_by: Account | None = None,
    dataset: Dataset | None = None,
    release: Release | None = None,
    policy: Mapping[str, Any] | None = None,
) -> Run:
    """A queued run: its config and policy, and its release and dataset when known here."""
    return Run.objects.create(
        project=project,
        status=Run.Status.QUEUED,
        split=config.get("split"),
        config=dict(config),
        confidence=confidence,
        created_by=created_by,
        dataset=dataset,
        release=release,
        cases_total=0 if dataset is None else dataset.n_cases,
        **OUTCOME_COUNTS_ZERO,
        **policy_fields(policy),
    )


def run_fail(*, run_id: int, reason: str) -> bool:
    """Mark an unfinished run failed with a reason people can read; False if it had finished."""
    failed = Run.objects.filter(
        pk=run_id, status__in=[Run.Status.QUEUED, Run.Status.RUNNING, Run.Status.FINALISING]
    ).update(status=Run.Status.FAILED, error=reason[:20000], finished_at=timezone.now())
    if failed:
        logger.warning("run %s failed: %s", run_id, reason)
    return bool(failed)


def run_started(
    *,
    run_id: int,
    release: Release,
    dataset: Dataset,
    sequential: Mapping[str, Any] | None = None,
    total: int | None = None,
) -> bool:
    """Move a queued run to running (once, whoever asks); False if it was not queued.
    `total`: the rows it runs now, when not all (a sequential run's first batch)."""
    started = Run.objects.filter(pk=run_id, status=Run.Status.QUEUED).update(
        status=Run.Status.RUNNING,
        release=release,
        dataset=dataset,
        cases_total=dataset.n_cases if total is None else total,
        cases_done=0,
        cases_failed=0,
        **OUTCOME_COUNTS_ZERO,
        started_at=timezone.now(),
        **({} if sequential is None else {"provenance": {"sequential": dict(sequential)}}),
    )
    return bool(started)


def chunk_cases_record(
    *,
    run_id: int,
    cases: Sequence[engine.CaseResult],
    pass_fail: frozenset[str],
    first_position: int,
    new_rows: bool = False,
    dataset_id: int | None = None,
) -> None:
    """Record a finished chunk's cases and verdicts and count them on the run.

    Called inside the transaction that marks the chunk done on its own claim, so a
    chunk's cases are written and counted exactly once; or for a batch of a run recorded
    as it goes (`new_rows`: no row can collide), with its dataset's rows (`dataset_id`)
    when `run_open_record` said they must come.
    """
    size = batch_size_or_default(None)
    with engine.fewer_collections():
        if dataset_id is not None:
            dataset_cases_create(
                dataset_id=dataset_id, cases=cases, first_position=first_position, batch_size=size
            )
        case_results_create(
            run_id=run_id,
            cases=cases,
            pass_fail=pass_fail,
            first_position=first_position,
            new_rows=new_rows,
        )
        case_verdicts_create(run_id=run_id, cases=cases, batch_size=size, new_run=new_rows)
    Run.objects.filter(pk=run_id).update(
        cases_done=F("cases_done") + len(cases),
        cases_failed=F("cases_failed") + sum(1 for case in cases if case.error is not None),
    )


def run_conclusion_record(*, run: Run, result: engine.Result, finished_at: datetime) -> bool:
    """Mark a running run succeeded with its metrics and gate, exactly once.

    False when another finaliser got there first (its transaction won the update), or
    when the run has moved on since `run` was read: a second finaliser of a sequential
    batch can arrive after "run more cases" reopened the run with a larger total, and
    its conclusion over the earlier cases must not end the continued run.
    """
    with transaction.atomic():
        succeeded = Run.objects.filter(
            pk=run.pk, status=Run.Status.RUNNING, cases_total=run.cases_total
        ).update(
            status=Run.Status.SUCCEEDED,
            provenance=result.provenance,
            confidence=float(result.provenance.get("confidence") or run.confidence),
            finished_at=finished_at,
            duration_s=result.provenance.get("duration_s"),
            error="",
            **policy_fields(result.provenance.get("policy")),
        )
        if not succeeded:
            return False
        gate = None if result.gate is None else result.gate.to_dict()
        _metrics_and_gate_record(run, result, gate, decided_at=finished_at)
    return True


def run_sequential_moved(
    *,
    run_id: int,
    cases_total: int,
    sequential: Mapping[str, Any],
    reopen: bool = False,
    cases_before: int | None = None,
) -> bool:
    """Move a sequential run on to more cases, once: `reopen` a succeeded one (its rows
    stay until the next look), or extend a running one from the total it had."""
    run = Run.objects.filter(pk=run_id).only("provenance").first()
    provenance = {**(run.provenance if run else {}), "sequential": dict(sequential)}
    status = Run.Status.SUCCEEDED if reopen else Run.Status.RUNNING
    query = Run.objects.filter(pk=run_id, status=status)
    if cases_before is not None:
        query = query.filter(cases_total=cases_before)
    reopened = {"finished_at": None, "error": ""} if reopen else {}
    changes = {"cases_total": cases_total, "provenance": provenance, **reopened}
    return bool(query.update(status=Run.Status.RUNNING, **changes))


def run_redate(*, run: Run, when: datetime, config: Mapping[str, Any] | None = None) -> None:
    """Date a run (and a release it alone belongs to) back, for example histories."""
    with transaction.atomic():
        changes: dict[str, Any] = {
            "created_at": when,
            "started_at": when - timedelta(seconds=run.duration_s or 1),
            "finished_at": when,
        }
        if config is not None:
            changes["config"] = dict(config)
        Run.objects.filter(pk=run.pk).update(**changes)
        Gate.objects.filter(run=run).update(decided_at=when)
        if Run.objects.filter(release=run.release).count() == 1:
            Release.objects.filter(runs=run).update(created_at=when)


def run_config_replace(*, run_ids: Iterable[int], config: Mapping[str, Any]) -> int:
    """Give recorded runs a full config (so the New-run form can start from them)."""
    return Run.objects.filter(pk__in=list(run_ids)).exclude(config=config).update(config=config)


def run_delete(*, run: Run) -> None:
    """Delete a run and every row of it (the caller checked it has no decision)."""
    Run.objects.filter(pk=run.pk).delete()
