"""`compare_runs`: pair two runs by case id and compare every metric they share."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

import numpy as np

from oloproof_core.compare._comparison import (
    Comparison,
    MetricComparison,
    ids_only_in,
)
from oloproof_core.compare._paired import FloatArray, paired_figures
from oloproof_core.compare._values import values_by_case
from oloproof_core.errors import OloproofError
from oloproof_core.stats import benjamini_hochberg, few_clusters_warning
from oloproof_core.stats._validate import check_confidence

if TYPE_CHECKING:
    from oloproof_core.aggregate import MetricEstimate
    from oloproof_core.result import Result


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
    `oloproof_core.compare._paired`). The figures depend on the set of cases,
    not on their order.

    With `fdr` (the default) each metric's `flag` is decided on its Benjamini–
    Hochberg q-value across the metrics; `fdr=False` flags on the plain p-values.
    """
    _check_has_cases(baseline, candidate)
    baseline_ids = [case.id for case in baseline.cases]
    candidate_ids = [case.id for case in candidate.cases]
    union = list(dict.fromkeys([*baseline_ids, *candidate_ids]))
    baseline_metrics = {metric.metric: metric for metric in baseline.metrics}
    candidate_metrics = {metric.metric: metric for metric in candidate.metrics}
    shared = [name for name in candidate_metrics if name in baseline_metrics]
    paired = PairedValues(
        baseline=baseline,
        candidate=candidate,
        ids=union,
        baseline_ids=baseline_ids,
        candidate_ids=candidate_ids,
        clusters=_clusters(baseline, candidate, union),
        baseline_values={
            name: _over(values_by_case(baseline, baseline_metrics[name]), union) for name in shared
        },
        candidate_values={
            name: _over(values_by_case(candidate, candidate_metrics[name]), union)
            for name in shared
        },
    )
    return compare_paired_values(paired, confidence, fdr=fdr)


@dataclass(frozen=True, slots=True)
class PairedValues:
    """Two runs' per-case values of each shared metric over the union of their case ids.

    `baseline` and `candidate` give the metrics' estimates and the labels (their
    cases are not read); `ids` is the union in reading order, `baseline_values[m]`
    and `candidate_values[m]` hold metric m's value on each case of `ids` (NaN where
    missing) for every metric both runs have. `clusters`, when cases carry one, is
    the label of each case of `ids`. A store that holds the values in columns builds
    this directly instead of whole results (see `runs.selectors`).
    """

    baseline: Result
    candidate: Result
    ids: Sequence[str]
    baseline_ids: Sequence[str]
    candidate_ids: Sequence[str]
    clusters: Sequence[str] | None
    baseline_values: Mapping[str, FloatArray]
    candidate_values: Mapping[str, FloatArray]


def compare_paired_values(
    paired: PairedValues, confidence: float = 0.95, *, fdr: bool = True
) -> Comparison:
    """`compare_runs` on values already paired by case id (same figures, same Comparison)."""
    level = check_confidence(confidence)
    baseline_metrics = {metric.metric: metric for metric in paired.baseline.metrics}
    candidate_metrics = {metric.metric: metric for metric in paired.candidate.metrics}
    union, clusters = list(paired.ids), paired.clusters
    compared = []
    for name, metric in candidate_metrics.items():
        if name in baseline_metrics:
            _check_same_type(baseline_metrics[name], metric)
            values = (paired.baseline_values[name], paired.candidate_values[name])
            compared.append(
                _compare_metric(baseline_metrics[name], metric, values, union, clusters, level)
            )
    compared = _flagged(compared, 1.0 - level, fdr)
    only_base = ids_only_in(paired.baseline_ids, paired.candidate_ids)
    only_cand = ids_only_in(paired.candidate_ids, paired.baseline_ids)
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
        n_clusters=None if clusters is None else len(set(clusters)),
        fdr=fdr,
    )


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


def _clusters(baseline: Result, candidate: Result, union: list[str]) -> list[str] | None:
    """Cluster label per case of the union, or None when no case carries one.

    A case without a cluster in a clustered dataset is its own cluster.
    """
    labels: dict[str, str | None] = {case.id: case.cluster for case in baseline.cases}
    for case in candidate.cases:
        if case.cluster is not None or labels.get(case.id) is None:
            labels[case.id] = case.cluster
    if all(label is None for label in labels.values()):
        return None
    return [labels.get(case_id) or f"case:{case_id}" for case_id in union]


def _check_same_type(base_metric: MetricEstimate, cand_metric: MetricEstimate) -> None:
    if base_metric.value_type != cand_metric.value_type:
        raise OloproofError(
            f"metric {cand_metric.metric!r} is {base_metric.value_type} in the "
            f"baseline but {cand_metric.value_type} in the candidate; they "
            "cannot be compared"
        )


def _over(values: Mapping[str, float | None], union: list[str]) -> FloatArray:
    """A metric's values over the union of case ids (NaN where missing)."""
    return np.array([_number(values.get(case_id)) for case_id in union], dtype=np.float64)


def _compare_metric(
    base_metric: MetricEstimate,
    cand_metric: MetricEstimate,
    values: tuple[FloatArray, FloatArray],
    union: list[str],
    clusters: Sequence[str] | None,
    confidence: float,
) -> MetricComparison:
    base, cand = values
    low = min(base_metric.score_range[0], cand_metric.score_range[0])
    high = max(base_metric.score_range[1], cand_metric.score_range[1])
    both = ~(np.isnan(base) | np.isnan(cand))
    differences = cand[both] - base[both]
    ids = np.asarray(union, dtype=object)[both]
    pass_fail = cand_metric.value_type == "pass_fail"
    figures = paired_figures(
        base, cand, pass_fail=pass_fail, low=low, high=high, confidence=confidence,
        clusters=clusters, keys=union,
    )  # fmt: skip
    n_clusters = None if clusters is None else len(set(clusters))
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
        n_pairs=len(union),
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
        _clusters=None if clusters is None else tuple(clusters),
        _ids=tuple(union),
    )


def _exact_mean(values: FloatArray) -> float | None:
    """Correctly rounded mean (independent of the order of the cases), None if empty."""
    return math.fsum(values) / values.size if values.size else None


def _number(value: float | None) -> float:
    return float("nan") if value is None else value
