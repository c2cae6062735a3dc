"""Runs: the history with its filters, one run, the progress of live runs, recorded configs."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.db.models import F, IntegerField, OuterRef, Q, QuerySet, Subquery, Sum
from django.db.models.functions import Coalesce

import oloproof_core as engine
from metrics.models import MetricEstimate
from runs.access import Actor, datasets_visible, run_for, runs_visible, systems_visible
from runs.errors import NotFoundError
from runs.models import Dataset, Release, Run, RunChunk
from runs.selectors.keyset import Count, Cursor, KeyOrder, capped_count, keyset_page

LIVE_STATUSES = (Run.Status.QUEUED, Run.Status.RUNNING, Run.Status.FINALISING)


@dataclass(frozen=True, slots=True)
class RunFilters:
    system: str | None = None
    release: str | None = None
    dataset_digest: str | None = None
    status: str | None = None
    gate_outcome: str | None = None
    created_after: datetime | None = None
    created_before: datetime | None = None
    tag: str | None = None
    hidden: bool = False
    """Whether hidden runs are listed too (the history leaves them out unless asked)."""


def runs_list(*, user: Actor, filters: RunFilters | None = None) -> QuerySet[Run]:
    """Runs `user` may see, newest first, with release, system, dataset and gate joined."""
    query = runs_visible(user=user).select_related(
        "project", "release__system", "dataset", "gate", "created_by", "keeping"
    )
    if filters is None:
        return query
    if not filters.hidden:
        query = query.exclude(keeping__hidden_at__isnull=False)
    if filters.tag:
        query = query.filter(tags__tag=filters.tag.strip().lower())
    if filters.system:
        query = query.filter(release__system__name=filters.system)
    if filters.release is not None:
        query = query.filter(release__version=filters.release)
    if filters.dataset_digest:
        # A prefix is enough, as with git commits.
        query = query.filter(dataset__digest__startswith=filters.dataset_digest)
    if filters.status:
        query = query.filter(status=filters.status)
    if filters.gate_outcome == "none":
        query = query.filter(gate__isnull=True)
    elif filters.gate_outcome:
        query = query.filter(gate__outcome=filters.gate_outcome)
    if filters.created_after is not None:
        query = query.filter(created_at__gte=filters.created_after)
    if filters.created_before is not None:
        query = query.filter(created_at__lt=filters.created_before)
    return query


def run_get(*, user: Actor, run_id: int) -> Run:
    """One run `user` may see; any other id is a NotFoundError.

    A live run's `cases_done` includes the cases its workers report from chunks in flight.
    """
    run = run_for(user=user, run_id=run_id)
    if run.status in LIVE_STATUSES:
        done, in_flight = (
            Run.objects.filter(pk=run.pk)
            .annotate(in_flight=cases_in_flight())
            .values_list("cases_done", "in_flight")
            .get()
        )
        run.cases_done = min(run.cases_total, done + in_flight)
    return run


def cases_in_flight() -> Coalesce:
    """An annotation of runs: the cases done in chunks that workers still hold (their
    heartbeats store them), 0 when none.

    A finished chunk's cases are counted on the run in the transaction that closes the
    chunk. Read in the same statement as the run's `cases_done`, the two add up to
    every case once; read in two, a chunk closing between them would be missed, and
    the count would step back.
    """
    held = (
        RunChunk.objects.filter(run_id=OuterRef("pk"), status=RunChunk.Status.CLAIMED)
        .values("run_id")
        .annotate(done=Sum("cases_done"))
        .values("done")
    )
    return Coalesce(Subquery(held, output_field=IntegerField()), 0)


def runs_in_order(*, user: Actor, run_ids: Sequence[int]) -> list[Run]:
    """These runs with release, system, dataset and gate, in the order of `run_ids`.

    The history is paged over bare ids (an index scan however deep the page) and
    only the page's own runs are then read with their joins.
    """
    found = runs_list(user=user).prefetch_related("tags").in_bulk(list(run_ids))
    return [found[run_id] for run_id in run_ids if run_id in found]


RUN_ORDER = KeyOrder("created_at", descending=True)
"""The history's order, newest first (the model's own ordering), for keyset paging."""


@dataclass(frozen=True, slots=True)
class RunsPage:
    runs: list[Run]
    next: str | None
    previous: str | None
    first: bool
    total: Count


def runs_page_of(
    *, user: Actor, filters: RunFilters | None, cursor: Cursor | None, size: int = 50
) -> RunsPage:
    """One page of `user`'s history under `filters`, after or before `cursor`: its ids
    through the creation-time index, then those runs with their joins; the history's
    size is counted up to a cap."""
    listed = runs_list(user=user, filters=filters)
    page = keyset_page(listed, order=RUN_ORDER, size=size, cursor=cursor)
    return RunsPage(
        runs=runs_in_order(user=user, run_ids=page.ids),
        next=page.next,
        previous=page.previous,
        first=page.first,
        total=capped_count(listed),
    )


def runs_headline_metrics(*, run_ids: Sequence[int]) -> dict[int, list[MetricEstimate]]:
    """Each run's criterion-level estimates (no sub-scores), in one query."""
    grouped: dict[int, list[MetricEstimate]] = defaultdict(list)
    rows = MetricEstimate.objects.filter(run_id__in=list(run_ids), metric=F("criterion"))
    for estimate in rows.order_by("run_id", "position", "id"):
        grouped[estimate.run_id].append(estimate)
    return dict(grouped)


@dataclass(frozen=True, slots=True)
class FilterChoices:
    systems: list[str]
    releases: list[str]
    datasets: list[Dataset]


def run_filter_choices(*, user: Actor) -> FilterChoices:
    """What `user`'s run history can be filtered by: their systems, versions and datasets."""
    systems = systems_visible(user=user)
    versions = (
        Release.objects.filter(system__in=systems)
        .order_by("version")
        .values_list("version", flat=True)
        .distinct()
    )
    names = systems.order_by("name").values_list("name", flat=True).distinct()
    return FilterChoices(
        systems=list(names),
        releases=[version for version in versions if version],
        datasets=list(
            datasets_visible(user=user).order_by("-created_at").only("digest", "source")[:200]
        ),
    )


def runs_live_status(*, user: Actor, run_ids: Iterable[int]) -> list[dict[str, Any]]:
    """Status and progress of some runs, for pages and commands that follow live runs."""
    rows: list[dict[str, Any]] = [
        dict(row)
        for row in runs_visible(user=user)
        .filter(pk__in=list(run_ids)[:200])
        .annotate(in_flight=cases_in_flight())
        .values("id", "status", "cases_done", "cases_total", "cases_failed", "error", "in_flight")
    ]
    for row in rows:
        in_flight = row.pop("in_flight")
        if row["status"] not in LIVE_STATUSES:
            in_flight = 0
        row["cases_done"] = min(row["cases_total"], row["cases_done"] + in_flight)
    return rows


def run_progress(*, user: Actor, run_id: int) -> dict[str, Any]:
    """One run's status and progress; a missing run is a NotFoundError."""
    found = runs_live_status(user=user, run_ids=[run_id])
    if not found:
        raise NotFoundError(f"no run with id {run_id}")
    progress = found[0]
    progress["finished"] = progress["status"] in (Run.Status.SUCCEEDED, Run.Status.FAILED)
    return progress


def recorded_configs(*, user: Actor, limit: int = 20) -> list[Run]:
    """Recent runs `user` may start again (runner role), one per distinct config, newest first."""
    seen: set[str] = set()
    picked: list[Run] = []
    query = (
        runs_visible(user=user, role="runner")
        .filter(config__has_key="evaluators")
        .select_related("release__system", "project")
        .order_by("-created_at", "-id")
    )
    for run in query[: limit * 5]:
        key = repr(sorted(run.config.items()))
        if key not in seen:
            seen.add(key)
            picked.append(run)
        if len(picked) == limit:
            break
    return picked


def runs_of_release_on_dataset(
    *, user: Actor, system_name: str, version: str, dataset_source: str
) -> list[int]:
    """Successful runs of a release on a dataset (by source), for idempotent recording."""
    return list(
        runs_visible(user=user)
        .filter(
            release__system__name=system_name,
            release__version=version,
            dataset__source=dataset_source,
            status=Run.Status.SUCCEEDED,
        )
        .values_list("pk", flat=True)
    )


def runs_of_cases(
    *,
    project_id: int,
    cases_digest: str,
    system_name: str,
    most: int,
    finished_before: datetime | None = None,
    source: str = "",
) -> list[Run]:
    """A system's `most` latest finished runs of the same cases (one dataset at any repeat
    count, or the same file as it was then), newest first: what `repeats: auto` reads
    (those finished before a run was queued, for the run it allocated)."""
    same_cases = Q(dataset__unrepeated_digest=cases_digest) | Q(
        dataset__unrepeated_digest="", dataset__digest=cases_digest
    )
    if engine.is_file_source(source):
        same_cases |= Q(dataset__source=source)
    finished = Run.objects.filter(
        same_cases,
        project_id=project_id,
        status=Run.Status.SUCCEEDED,
        release__system__name=system_name,
    )
    if finished_before is not None:
        finished = finished.filter(finished_at__lt=finished_before)
    return list(finished.select_related("dataset").order_by("-finished_at", "-id")[:most])
