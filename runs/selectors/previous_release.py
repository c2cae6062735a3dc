"""Is this release better than the one before it? The run page's answer.

The previous release is the system's release created just before this run's one that
has a successful run on the same dataset (a paired comparison needs the same cases);
its latest such run is the baseline. The figures are the compare page's own
(`runs_compare`), so the two pages always agree.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.db.models import Q

from oloproof_core.results.compare import Comparison
from runs.access import Actor, runs_visible
from runs.errors import InvalidRequestError
from runs.models import Run
from runs.selectors.comparison import runs_compare


@dataclass(frozen=True, slots=True)
class PreviousRelease:
    """The baseline run of the previous release and its paired comparison with this run."""

    baseline: Run
    comparison: Comparison | None
    problem: str = ""
    """Why the two runs could not be compared, when they could not."""

    def flagged(self, flag: str) -> list[str]:
        """Metrics the comparison flags `improved` or `regressed` (false-discovery controlled)."""
        if self.comparison is None:
            return []
        return [item.metric for item in self.comparison.metrics if item.flag == flag]

    @property
    def better(self) -> list[str]:
        return self.flagged("improved")

    @property
    def worse(self) -> list[str]:
        return self.flagged("regressed")


def run_previous_release(*, user: Actor, run: Run) -> Run | None:
    """The latest successful run of the previous release of `run`'s system on its dataset."""
    release = run.release
    if release is None or run.dataset_id is None:
        return None
    earlier = Q(release__created_at__lt=release.created_at) | Q(
        release__created_at=release.created_at, release_id__lt=release.pk
    )
    return (
        runs_visible(user=user)
        .filter(
            earlier,
            release__system_id=release.system_id,
            dataset_id=run.dataset_id,
            status=Run.Status.SUCCEEDED,
        )
        .select_related("release__system", "gate")
        .order_by("-release__created_at", "-release_id", "-created_at", "-id")
        .first()
    )


def run_previous_comparison(*, user: Actor, run: Run) -> PreviousRelease | None:
    """This finished run against the previous release, or None when there is none."""
    if run.status != Run.Status.SUCCEEDED:
        return None
    baseline = run_previous_release(user=user, run=run)
    if baseline is None:
        return None
    try:
        return PreviousRelease(baseline, runs_compare(baseline=baseline, candidate=run))
    except InvalidRequestError as exc:
        return PreviousRelease(baseline, None, str(exc))
