"""`compare_runs`: pair two runs by case id and compare every metric they share."""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

from oloproof_core.errors import OloproofError
from oloproof_core.evaluation.repeats import tries_vary
from oloproof_core.results.compare._columns import PairedValues, paired_columns, value_columns
from oloproof_core.results.compare._comparison import Comparison, ids_only_in
from oloproof_core.results.compare._figures import MetricComparison
from oloproof_core.results.compare._paired import FloatArray, paired_figures
from oloproof_core.stats import ClusterGroups, ReadOrder, benjamini_hochberg, few_clusters_warning
from oloproof_core.stats._validate import check_confidence

if TYPE_CHECKING:
    from oloproof_core.results.estimate import MetricEstimate
    from oloproof_core.results.result import Result


def run_label(result: Result) -> str:
    system = result.provenance.get("system") or {}
    name = str(system.get("name") or "?")
    version = system.get("version")
    label = f"{name}@{version}" if version else name
    return f"{label} (run {result.run_id})" if result.run_id else label


def compare_runs(
    baseline: Result, candidate: Result, confidence: float = 0.95, *, fdr: bool = True
) -> Comparison:
    """Compare `candidate` against `baseline` on the same cases, paired by case id.

    Every metric present in both runs (sub-scores included) gets both estimates
    and their difference over the complete pairs, a paired interval and p-value
    from one procedure over all cases, and the regressed and improved case ids.
    Cases present in only one run are listed and treated as pairs with a missing
    side: they widen the interval instead of being dropped. When cases carry a
    `cluster`, intervals and p-values are cluster-aware (see
    `oloproof_core.results.compare._paired`). The figures depend on the set of cases,
    not on their order.

    With `fdr` (the default) each metric's `flag` is decided on its Benjamini–
    Hochberg q-value across the metrics; `fdr=False` flags on the plain p-values.
    Where both runs carry people's labels of a metric on one queue's draws,
    `labelled` holds the difference from verdicts and labels together.
    """
    _check_has_cases(baseline, candidate)
    paired = paired_columns(baseline, candidate, value_columns(baseline), value_columns(candidate))
    comparison = compare_paired_values(paired, confidence, fdr=fdr)
    if baseline.labels and candidate.labels:
        from oloproof_core.labels import labelled_change

        found = {
            item.metric: labelled_change(baseline, candidate, item.metric, comparison.confidence)
            for item in comparison.metrics
            if item.metric == item.criterion  # labels are per criterion
        }
        labelled = {name: figure for name, figure in found.items() if figure is not None}
        comparison = replace(comparison, labelled=labelled)
    return comparison


def compare_paired_values(
    paired: PairedValues, confidence: float = 0.95, *, fdr: bool = True
) -> Comparison:
    """`compare_runs` on values already paired by case id (same figures, same Comparison).

    Runs that repeated each case a different number of times, or some cases more than
    others (`repeats: auto`), are compared on each case's means over its repeats
    (`_case_means.py`)."""
    level = check_confidence(confidence)
    repeats = (repeats_of(paired.baseline), repeats_of(paired.candidate))
    if repeats[0] != repeats[1] or any(
        tries_vary(side.provenance) for side in (paired.baseline, paired.candidate)
    ):
        from oloproof_core.results.compare._case_means import compare_case_means

        return compare_case_means(
            paired, lambda units: _compared(units, level, fdr, repeats, means=True)
        )
    return _compared(paired, level, fdr, repeats, means=False)


def _compared(
    paired: PairedValues, level: float, fdr: bool, repeats: tuple[int, int], *, means: bool
) -> Comparison:
    """The comparison of `paired`'s rows; with `means`, they are case means."""
    baseline_metrics = {metric.metric: metric for metric in paired.baseline.metrics}
    candidate_metrics = {metric.metric: metric for metric in paired.candidate.metrics}
    union, clusters = list(paired.ids), paired.clusters
    # Coded once for every metric: the costliest step of clustered figures.
    groups = paired.cluster_groups
    if groups is None and clusters is not None:
        groups = ClusterGroups(clusters)
    shared = _Shared(
        ids=np.asarray(union, dtype=object),
        id_list=union,
        id_tuple=tuple(union),
        labels=None if clusters is None else tuple(clusters),
        groups=groups,
        # Hashing every id costs more than the statistics: only where they read it.
        order=_read_order(paired, union) if groups is None else None,
        # A case's mean over its repeats is a share, not a verdict: its bounded mean.
        verdicts=not means,
    )
    compared = []
    for name, metric in candidate_metrics.items():
        if name in baseline_metrics:
            _check_same_type(baseline_metrics[name], metric)
            values = (paired.baseline_values[name], paired.candidate_values[name])
            compared.append(_compare_metric(baseline_metrics[name], metric, values, shared, level))
    compared = _flagged(compared, 1.0 - level, fdr)
    same_cases = paired.baseline_ids == paired.candidate_ids
    only_base = () if same_cases else ids_only_in(paired.baseline_ids, paired.candidate_ids)
    only_cand = () if same_cases else ids_only_in(paired.candidate_ids, paired.baseline_ids)
    return Comparison(
        baseline=run_label(paired.baseline),
        candidate=run_label(paired.candidate),
        confidence=level,
        metrics=tuple(compared),
        n_cases=len(union),
        n_common=len(union) - len(only_base) - len(only_cand),
        only_in_baseline=only_base,
        only_in_candidate=only_cand,
        metrics_only_in_baseline=tuple(n for n in baseline_metrics if n not in candidate_metrics),
        metrics_only_in_candidate=tuple(n for n in candidate_metrics if n not in baseline_metrics),
        n_clusters=None if groups is None else groups.count,
        fdr=fdr,
        repeats=repeats,
        auto=(tries_vary(paired.baseline.provenance), tries_vary(paired.candidate.provenance)),
    )


def repeats_of(result: Result) -> int:
    """How many times the run ran each case (its `provenance["repeats"]`; 1 without)."""
    from oloproof_core.evaluation.repeats import repeats_in

    return repeats_in(result.provenance)


def _check_has_cases(baseline: Result, candidate: Result) -> None:
    for name, result in (("baseline", baseline), ("candidate", candidate)):
        if not result.cases and result.metrics:
            raise OloproofError(
                f"the {name} run carries no cases, so nothing can be paired; "
                "save results with their cases (oloproof run --json keeps "
                "them)"
            )


def _flagged(items: list[MetricComparison], alpha: float, fdr: bool) -> list[MetricComparison]:
    """Set each metric's q-value and flag (regressed / improved / None)."""
    p_values = [1.0 if item.p_value is None else item.p_value for item in items]
    q_values = benjamini_hochberg(p_values) if fdr else p_values
    flagged = []
    for item, q in zip(items, q_values, strict=True):
        flag = None
        if q <= alpha and item.difference is not None:
            flag = "improved" if item.interval.lower > 0 else "regressed"
        flagged.append(replace(item, q_value=q, flag=flag))
    return flagged


def _read_order(paired: PairedValues, union: list[str]) -> ReadOrder:
    return ReadOrder.of(union) if paired.read_order is None else paired.read_order


def _check_same_type(base_metric: MetricEstimate, cand_metric: MetricEstimate) -> None:
    if base_metric.value_type != cand_metric.value_type:
        raise OloproofError(
            f"metric {cand_metric.metric!r} is {base_metric.value_type} in the "
            f"baseline but {cand_metric.value_type} in the candidate; they "
            "cannot be compared"
        )


@dataclass(frozen=True, slots=True)
class _Shared:
    """What every metric of one comparison reads alike, built once."""

    ids: npt.NDArray[np.object_]
    id_list: list[str]
    id_tuple: tuple[str, ...]
    labels: tuple[str, ...] | None
    groups: ClusterGroups | None
    order: ReadOrder | None
    verdicts: bool
    """Whether a pass/fail metric's values are verdicts (else shares of passed repeats)."""


def _compare_metric(
    base_metric: MetricEstimate,
    cand_metric: MetricEstimate,
    values: tuple[FloatArray, FloatArray],
    shared: _Shared,
    confidence: float,
) -> MetricComparison:
    base, cand = values
    low = min(base_metric.score_range[0], cand_metric.score_range[0])
    high = max(base_metric.score_range[1], cand_metric.score_range[1])
    both = ~(np.isnan(base) | np.isnan(cand))
    differences = cand[both] - base[both]
    ids = shared.ids[both]
    pass_fail = cand_metric.value_type == "pass_fail" and shared.verdicts
    figures = paired_figures(
        base, cand, pass_fail=pass_fail, low=low, high=high, confidence=confidence,
        clusters=shared.groups, keys=shared.order,
    )  # fmt: skip
    n_clusters = None if shared.groups is None else shared.groups.count
    return MetricComparison(
        metric=cand_metric.metric,
        criterion=cand_metric.criterion,
        value_type=cand_metric.value_type,
        score_range=(low, high),
        baseline_estimate=_exact_mean(base[both]),
        candidate_estimate=_exact_mean(cand[both]),
        difference=_exact_mean(differences),
        interval=figures.interval,
        p_value=figures.p_value,
        method=figures.method,
        confidence=confidence,
        n_pairs=len(shared.id_list),
        n_missing_pairs=int(np.count_nonzero(~both)),
        regressed=tuple(str(case_id) for case_id in ids[differences < 0]),
        improved=tuple(str(case_id) for case_id in ids[differences > 0]),
        n_clusters=n_clusters,
        n_complete=int(np.count_nonzero(both)),
        q_value=None,
        flag=None,
        warning=few_clusters_warning(n_clusters),
        _baseline=base,
        _candidate=cand,
        # One tuple for every metric: pickled into the cache once.
        _clusters=shared.labels,
        _ids=shared.id_tuple,
    )


def _exact_mean(values: FloatArray) -> float | None:
    """Correctly rounded mean (independent of the order of the cases), None if empty."""
    # fsum over a list: over the array's elements it is several times slower.
    return math.fsum(values.tolist()) / values.size if values.size else None
