"""Systems and their releases over time."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field

from django.db.models import Count, QuerySet

from metrics.models import MetricEstimate
from runs.access import Actor, systems_visible
from runs.errors import NotFoundError
from runs.models import Approval, Gate, Release, Run, System
from runs.selectors.release_figures import release_figure_runs


def system_get(*, user: Actor, system_id: int) -> System:
    system = systems_visible(user=user).select_related("project").filter(pk=system_id).first()
    if system is None:
        raise NotFoundError(f"no system with id {system_id}")
    return system


@dataclass(slots=True)
class ReleasePoint:
    """A release with its figure's run (its approved run, else its latest judged with the
    release's standing evaluators), that run's metrics, gate and approvals."""

    release: Release
    run_count: int
    run: Run | None
    metrics: list[MetricEstimate] = field(default_factory=list)
    gate: Gate | None = None
    approvals: list[Approval] = field(default_factory=list)


def system_release_history(*, system: System) -> list[ReleasePoint]:
    """The system's releases, oldest first, each with its figure's run
    (`runs.selectors.release_figures`); a fixed number of queries however many runs."""
    releases = list(
        Release.objects.filter(system=system)
        .annotate(run_count=Count("runs"))
        .order_by("created_at", "id")
    )
    figures = release_figure_runs(system=system, releases=releases)
    run_ids = list(figures.values())
    runs = Run.objects.select_related("dataset").in_bulk(run_ids)
    metrics: dict[int, list[MetricEstimate]] = defaultdict(list)
    for estimate in MetricEstimate.objects.filter(run_id__in=run_ids).order_by("position", "id"):
        metrics[estimate.run_id].append(estimate)
    gates = {gate.run_id: gate for gate in Gate.objects.filter(run_id__in=run_ids)}
    approvals: dict[int, list[Approval]] = defaultdict(list)
    for approval in Approval.objects.filter(gate__run_id__in=run_ids).select_related(
        "user", "gate"
    ):
        approvals[approval.gate.run_id].append(approval)
    points = []
    for release in releases:
        run_id = figures.get(release.pk)
        points.append(
            ReleasePoint(
                release=release,
                run_count=release.run_count,
                run=runs.get(run_id) if run_id else None,
                metrics=metrics.get(run_id, []) if run_id else [],
                gate=gates.get(run_id) if run_id else None,
                approvals=approvals.get(run_id, []) if run_id else [],
            )
        )
    return points


def systems_overview(*, user: Actor) -> QuerySet[System]:
    return (
        systems_visible(user=user)
        .select_related("project")
        .annotate(release_count=Count("releases", distinct=True), run_count=Count("releases__runs"))
        .order_by("name")
    )
