"""The paired comparison of two recorded runs: one path for the API and the dashboard."""

from __future__ import annotations

import threading
from collections import OrderedDict

from django.core.cache import cache
from django.db.models import Q, QuerySet

import oloproof_core as engine
from oloproof_core.results.compare import Comparison, compare_paired_values
from runs.access import Actor, runs_visible
from runs.errors import InvalidRequestError
from runs.models import Dataset, Run
from runs.selectors.comparison_values import runs_paired_values

COMPARISON_CACHE_S = 3600
RECENT_IN_PROCESS = 4
"""Comparisons also kept unpickled in this process: the grid pages through one comparison,
and unpickling 100,000 cases' arrays and ids from the shared cache costs more than the page."""
_recent: OrderedDict[str, Comparison] = OrderedDict()
_recent_lock = threading.Lock()


def comparable_runs(*, user: Actor, dataset_id: int | None, limit: int = 200) -> QuerySet[Run]:
    """Finished runs `user` may see on a dataset's cases, at any repeat count (all runs
    without a dataset), newest first."""
    query = (
        runs_visible(user=user)
        .filter(status=Run.Status.SUCCEEDED)
        .select_related("release__system")
    )
    if dataset_id is not None:
        query = query.filter(_same_cases(dataset_id))
    return query.order_by("-created_at", "-id")[:limit]


def _same_cases(dataset_id: int) -> Q:
    """The runs over this dataset's cases: on it, or on it (or the dataset it repeats)
    repeated any number of times."""
    record = Dataset.objects.filter(pk=dataset_id).first()
    if record is None:
        return Q(dataset_id=dataset_id)
    base = record.cases_digest
    return Q(dataset_id=dataset_id) | Q(dataset__digest=base) | Q(dataset__unrepeated_digest=base)


def comparison_problem(*, baseline: Run, candidate: Run) -> str:
    """Why two runs cannot be compared case by case, or "" when they can."""
    if baseline.pk == candidate.pk:
        return "pick two different runs"
    if not (baseline.is_finished and candidate.is_finished):
        return "both runs must have finished"
    if baseline.dataset_id == candidate.dataset_id:
        return ""
    records = (baseline.dataset, candidate.dataset)
    if records[0] and records[1] and records[0].cases_digest == records[1].cases_digest:
        return ""  # one dataset at different repeat counts
    return engine.different_cases(baseline.provenance, candidate.provenance) or (
        "the runs were evaluated on different datasets; a paired comparison needs the same cases"
    )


def runs_compare(*, baseline: Run, candidate: Run, fdr: bool = True) -> Comparison:
    """The paired comparison of two finished runs on one dataset, computed once, then cached.

    A finished run's verdicts never change, so the key (both ids, both finishing
    times, the confidence and the multiplicity rule) names one result for good. With
    `fdr` each metric is flagged on its Benjamini–Hochberg q-value across the metrics,
    without it on its plain p-value (`oloproof compare --no-fdr`). Runs that cannot be
    compared are an InvalidRequestError that says why.
    """
    problem = comparison_problem(baseline=baseline, candidate=candidate)
    if problem:
        raise InvalidRequestError(problem)

    def stamp(run: Run) -> str:
        return "-" if run.finished_at is None else f"{run.finished_at.timestamp():.6f}"

    # No spaces in the key: memcached, a likely production cache, refuses them.
    key = (
        f"oloproof:compare:{baseline.pk}:{candidate.pk}:{stamp(baseline)}:"
        f"{stamp(candidate)}:{candidate.confidence}:{'bh' if fdr else 'none'}"
    )
    with _recent_lock:
        comparison = _recent.get(key)
    if comparison is None:
        comparison = cache.get(key)
    if comparison is None:
        try:
            comparison = compare_paired_values(
                runs_paired_values(baseline=baseline, candidate=candidate),
                candidate.confidence,
                fdr=fdr,
            )
        except engine.OloproofError as exc:
            raise InvalidRequestError(str(exc)) from None
        cache.set(key, comparison, COMPARISON_CACHE_S)
    return _remembered(key, comparison)


def recent_comparisons_clear() -> None:
    """Forget the comparisons this process keeps (the shared cache is cleared on its own)."""
    with _recent_lock:
        _recent.clear()


def _remembered(key: str, comparison: Comparison) -> Comparison:
    with _recent_lock:
        _recent[key] = comparison
        _recent.move_to_end(key)
        while len(_recent) > RECENT_IN_PROCESS:
            _recent.popitem(last=False)
    return comparison
