"""From verdicts to metrics: an estimate and an honest interval per criterion and sub-score."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from oloproof_core.case import CaseResult
from oloproof_core.evaluators import Evaluator
from oloproof_core.stats import (
    Interval,
    clustered_mean_interval,
    mean_interval,
    proportion_interval,
)

CLOPPER_PEARSON = "clopper-pearson exact"
BETTING = "betting (Waudby-Smith & Ramdas 2024)"
CLUSTER_AWARE = " + cluster-robust CR1 (asymptotic)"


@dataclass(frozen=True, slots=True)
class MetricEstimate:
    """One metric of a run.

    `estimate` is computed over the observed verdicts and is None when nothing was
    observed; `interval` covers every way the `n_missing` cases could have gone.
    """

    metric: str
    estimate: float | None
    interval: Interval
    n_observed: int
    n_missing: int
    method: str
    confidence: float
    value_type: str
    score_range: tuple[float, float]
    criterion: str

    @property
    def is_sub_score(self) -> bool:
        return self.metric != self.criterion

    def to_dict(self) -> dict[str, Any]:
        return {
            "metric": self.metric,
            "criterion": self.criterion,
            "estimate": self.estimate,
            "interval": {"lower": self.interval.lower, "upper": self.interval.upper},
            "n_observed": self.n_observed,
            "n_missing": self.n_missing,
            "method": self.method,
            "confidence": self.confidence,
            "value_type": self.value_type,
            "score_range": list(self.score_range),
        }


def aggregate(
    cases: Sequence[CaseResult], evaluators: Sequence[Evaluator], confidence: float
) -> list[MetricEstimate]:
    clusters = case_clusters(cases)
    metrics: list[MetricEstimate] = []
    for evaluator in evaluators:
        criterion = evaluator.criterion
        verdicts = [case.verdicts[criterion] for case in cases]
        values = [v.value for v in verdicts]
        metrics.append(
            estimate_metric(
                criterion,
                criterion,
                values,
                evaluator.value_type,
                evaluator.score_range,
                confidence,
                clusters,
            )
        )
        sub_names = dict.fromkeys(name for v in verdicts for name in v.scores)
        for name in sub_names:
            sub_values = [None if v.value is None else v.scores.get(name) for v in verdicts]
            metrics.append(
                estimate_metric(
                    f"{criterion}.{name}",
                    criterion,
                    sub_values,
                    "score",
                    evaluator.sub_score_range,
                    confidence,
                    clusters,
                )
            )
    return metrics


def case_clusters(cases: Sequence[CaseResult]) -> list[str] | None:
    """Each case's cluster, or None when no case has one; an unclustered case stands alone."""
    if all(case.cluster is None for case in cases):
        return None
    return [case.cluster if case.cluster is not None else f"\0{case.id}" for case in cases]


def estimate_metric(
    metric: str,
    criterion: str,
    values: Sequence[float | None],
    value_type: str,
    score_range: tuple[float, float],
    confidence: float,
    clusters: Sequence[str] | None = None,
) -> MetricEstimate:
    """Estimate over the observed values, interval over every completion of the missing ones.

    With clusters (Miller 2024, "Adding Error Bars to Evals", §3.2) the interval is
    the hull of the finite-sample one and the cluster-robust one: the cluster-robust
    interval carries the correlation within clusters, the finite-sample one keeps the
    guarantee at small n that the asymptotic interval lacks.
    """
    observed = [value for value in values if value is not None]
    n_missing = len(values) - len(observed)
    if value_type == "pass_fail":
        successes = sum(1 for value in observed if value >= 1.0)
        interval = proportion_interval(successes, len(observed), n_missing, confidence)
        estimate = successes / len(observed) if observed else None
        method = CLOPPER_PEARSON
    else:
        low, high = score_range
        interval = mean_interval(observed, n_missing, low, high, confidence)
        estimate = sum(observed) / len(observed) if observed else None
        method = BETTING
    if clusters is not None:
        low, high = (0.0, 1.0) if value_type == "pass_fail" else score_range
        clustered = clustered_mean_interval(values, clusters, low, high, confidence)
        interval = Interval(
            min(interval.lower, clustered.lower), max(interval.upper, clustered.upper)
        )
        method += CLUSTER_AWARE
    return MetricEstimate(
        metric=metric,
        estimate=estimate,
        interval=interval,
        n_observed=len(observed),
        n_missing=n_missing,
        method=method,
        confidence=confidence,
        value_type=value_type,
        score_range=score_range,
        criterion=criterion,
    )
