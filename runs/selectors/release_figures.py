"""Which run stands for each release of a system on its page (its figure).

A release's figure is its approved run (the latest approval still standing; hiding it
from the history does not change the release's record), else its latest successful
run that is not hidden and was judged with the release's standing evaluator set. The
standing set (the criteria a run's metrics were judged on) is the one of the system's
latest approved run when some run of the release was judged with it, else the one the
release was first judged with (its earliest successful run that is not hidden). So a
debugging run with a throwaway evaluator, whatever its outcome, never takes a release's
place in the history: its criteria differ from the standing set. A run judged with the
standing set is evidence about the release and counts, broken or not: hide it if it
should not.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence

from metrics.models import MetricEstimate
from runs.models import Approval, Release, Run, System


def _criteria(run_ids: list[int]) -> dict[int, frozenset[str]]:
    found: dict[int, set[str]] = defaultdict(set)
    rows = MetricEstimate.objects.filter(run_id__in=run_ids).values_list("run_id", "criterion")
    for run_id, criterion in rows.order_by():
        found[run_id].add(criterion)
    return {run_id: frozenset(criteria) for run_id, criteria in found.items()}


def _approved_runs(system: System) -> list[tuple[int, int]]:
    """(release id, run id) of the system's standing approvals, oldest decision first."""
    return list(
        Approval.objects.filter(
            gate__run__release__system=system,
            gate__run__status=Run.Status.SUCCEEDED,
            decision=Approval.Decision.APPROVE,
            revocation__isnull=True,
        )
        .order_by("created_at", "id")
        .values_list("gate__run__release_id", "gate__run_id")
    )


def release_figure_runs(*, system: System, releases: Sequence[Release]) -> dict[int, int]:
    """Each release's figure run id (a release without one is left out); three queries."""
    approved = _approved_runs(system)
    by_release: dict[int, list[int]] = defaultdict(list)
    candidates = (
        Run.objects.filter(release__in=releases, status=Run.Status.SUCCEEDED)
        .exclude(keeping__hidden_at__isnull=False)
        .order_by("created_at", "id")
        .values_list("pk", "release_id")
    )
    for run_id, release_id in candidates:
        by_release[release_id].append(run_id)
    run_ids = [run_id for runs in by_release.values() for run_id in runs]
    criteria = _criteria(run_ids + [run_id for _, run_id in approved[-1:]])
    system_set = criteria.get(approved[-1][1]) if approved else None
    figures = dict(approved)  # the latest approval of a release is written last
    for release in releases:
        runs = by_release.get(release.pk, [])
        if release.pk in figures or not runs:
            continue
        sets = [criteria.get(run_id, frozenset()) for run_id in runs]
        standing = system_set if system_set in sets else sets[0]
        figures[release.pk] = next(
            run_id
            for run_id, judged in zip(reversed(runs), reversed(sets), strict=True)
            if judged == standing
        )
    return {release.pk: figures[release.pk] for release in releases if release.pk in figures}
