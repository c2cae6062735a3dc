"""Up to eight runs of one dataset side by side, each paired with one baseline.

Each pair's figures are `runs_compare`'s (the two-run compare page's own, cached), so a
pair reads the same here, on its own compare page, on the run page and from the API.
The baseline, when not chosen, is the approved run among those named, else the run of
the earliest release (the previous release of the others); a single run named is
compared with its previous release, else with the approved run of its dataset.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from oloproof_core.results.compare import (
    Comparison,
    MetricComparison,
    SideBySide,
    side_by_side_problem,
)
from runs.access import Actor, runs_visible
from runs.errors import InvalidRequestError, NotFoundError
from runs.models import Approval, Run
from runs.selectors.comparison import comparison_problem, runs_compare
from runs.selectors.previous_release import run_previous_release
from runs.selectors.runs import runs_in_order


def side_by_side_runs(*, user: Actor, run_ids: Sequence[int]) -> list[Run]:
    """The runs named, each once, in the order named; one not visible is a 404."""
    wanted = list(dict.fromkeys(run_ids))
    found = runs_in_order(user=user, run_ids=wanted)
    if len(found) < len(wanted):
        missing = sorted(set(wanted) - {run.pk for run in found})
        raise NotFoundError(f"no run with id {missing[0]}")
    return found


def _approved_among(runs: Sequence[Run]) -> Run | None:
    decision = (
        Approval.objects.filter(
            gate__run__in=[run.pk for run in runs],
            decision=Approval.Decision.APPROVE,
            revocation__isnull=True,
        )
        .order_by("-created_at", "-id")
        .values_list("gate__run_id", flat=True)
        .first()
    )
    return next((run for run in runs if run.pk == decision), None)


def _approved_on_dataset(*, user: Actor, run: Run) -> Run | None:
    if run.dataset_id is None:
        return None
    finished = runs_visible(user=user).filter(
        dataset_id=run.dataset_id, status=Run.Status.SUCCEEDED
    )
    return _approved_among(list(finished.exclude(pk=run.pk).select_related("release__system")))


def _release_order(run: Run) -> tuple[object, ...]:
    release = run.release
    if release is None:
        return (run.created_at, 0, run.pk)
    return (release.created_at, release.pk, run.created_at, run.pk)


def side_by_side_baseline(*, user: Actor, runs: Sequence[Run]) -> Run | None:
    """The baseline a reader most likely means for `runs` (see the module's note)."""
    if len(runs) == 1:
        run = runs[0]
        return run_previous_release(user=user, run=run) or _approved_on_dataset(user=user, run=run)
    return _approved_among(runs) or min(runs, key=_release_order, default=None)


def runs_side_by_side(*, baseline: Run, candidates: Sequence[Run], fdr: bool = True) -> SideBySide:
    """Each candidate's paired comparison with `baseline`; a pair that cannot be
    compared (another dataset, unfinished) is an InvalidRequestError naming the run."""
    problem = side_by_side_problem(1 + len(candidates))
    if problem:
        raise InvalidRequestError(problem)
    for candidate in candidates:
        problem = comparison_problem(baseline=baseline, candidate=candidate)
        if problem:
            raise InvalidRequestError(f"run {candidate.pk} against run {baseline.pk}: {problem}")
    comparisons = tuple(
        runs_compare(baseline=baseline, candidate=candidate, fdr=fdr) for candidate in candidates
    )
    return SideBySide(baseline=comparisons[0].baseline, comparisons=comparisons)


@dataclass(frozen=True, slots=True)
class RunsSideBySide:
    """The runs named, the baseline (chosen or pre-filled), and each other run against it."""

    runs: list[Run]
    baseline: Run
    candidates: list[Run]
    side: SideBySide

    def rows(self) -> list[tuple[Run, Comparison, MetricComparison]]:
        """(run, its pair, one metric) for each metric of each pair, metric by metric."""
        return [(self.candidates[at], pair, item) for at, pair, item in self.side.rows()]

    def to_dict(self) -> dict[str, Any]:
        """The REST API's answer: `SideBySide.to_dict()` with the runs' ids."""
        answer = self.side.to_dict()
        answer["pairs"] = [
            {"baseline_run": self.baseline.pk, "candidate_run": run.pk, **pair}
            for run, pair in zip(self.candidates, answer["pairs"], strict=True)
        ]
        return {
            "baseline_run": self.baseline.pk,
            "runs": [run.pk for run in self.runs],
            **answer,
        }


def runs_side_by_side_named(
    *, user: Actor, run_ids: Sequence[int], baseline_id: int | None = None, fdr: bool = True
) -> RunsSideBySide:
    """The dashboard's and the API's side-by-side of the runs named (see the module's note).

    A baseline not among `run_ids` joins them; without one, it is pre-filled."""
    named = list(run_ids) + ([baseline_id] if baseline_id is not None else [])
    runs = side_by_side_runs(user=user, run_ids=named)
    baseline = next((run for run in runs if run.pk == baseline_id), None)
    baseline = baseline or side_by_side_baseline(user=user, runs=runs)
    if baseline is None:
        raise InvalidRequestError(
            "no baseline to compare with: tick a second finished run of the same dataset, "
            "or approve a run of it"
        )
    if baseline not in runs:
        runs.insert(0, baseline)
    candidates = [run for run in runs if run.pk != baseline.pk]
    side = runs_side_by_side(baseline=baseline, candidates=candidates, fdr=fdr)
    return RunsSideBySide(runs=runs, baseline=baseline, candidates=candidates, side=side)
