"""From verdicts to metrics: an estimate and an honest interval per criterion and sub-score."""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING

from oloproof_core import stats
from oloproof_core.cases.case import CaseResult
from oloproof_core.judging.evaluators import Evaluator
from oloproof_core.results.columns.case_columns import CaseColumns, listed
from oloproof_core.results.columns.spilled import SpilledColumns
from oloproof_core.results.estimate import MetricEstimate
from oloproof_core.stats import Interval, proportion_interval

if TYPE_CHECKING:
    from oloproof_core.results.columns.case_columns import FloatArray
    from oloproof_core.stats._order import Keys

CLOPPER_PEARSON = "clopper-pearson exact"
BETTING = "betting (Waudby-Smith & Ramdas 2024)"
CLUSTER_AWARE = " + betting on cluster means (finite-sample)"


def aggregate(
    cases: Sequence[CaseResult], evaluators: Sequence[Evaluator], confidence: float
) -> list[MetricEstimate]:
    if isinstance(cases, CaseColumns):
        return aggregate_columns(cases, evaluators, confidence)
    clusters = case_clusters(cases)
    ids = [case.id for case in cases]
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
                keys=ids,
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
                    keys=ids,
                )
            )
    return metrics


def aggregate_columns(
    columns: CaseColumns, evaluators: Sequence[Evaluator], confidence: float
) -> list[MetricEstimate]:
    """`aggregate` over a run's value columns: the same figures, never a case object.

    Without clusters a metric is estimated from its column itself, read in the order
    the columns carry (`CaseColumns.order_keys`); with clusters, one metric at a time
    as a list, as `estimate_metric` reads it.
    """
    if isinstance(columns, SpilledColumns) and not columns.clustered:
        return [
            _spilled_estimate(columns, *named, confidence)
            for named in _named_metrics(columns, evaluators)
        ]
    clusters = columns.cluster_keys()
    metrics: list[MetricEstimate] = []
    for evaluator in evaluators:
        criterion = evaluator.criterion
        named = [(criterion, columns.metric_values(criterion), evaluator.value_type)]
        named += [
            (f"{criterion}.{name}", sub_values, "score")
            for name, sub_values in columns.scores.get(criterion, {}).items()
        ]
        for metric, column, value_type in named:
            low_high = evaluator.score_range if metric == criterion else evaluator.sub_score_range
            figures = (value_type, low_high, confidence)
            if clusters is None:
                found = _column_estimate(metric, criterion, column, *figures, columns.order_keys())
            else:
                values = listed(column)
                found = estimate_metric(
                    metric, criterion, values, *figures, clusters, keys=columns.ids
                )
            metrics.append(found)
    return metrics


def _named_metrics(
    columns: CaseColumns, evaluators: Sequence[Evaluator]
) -> Iterator[tuple[str, str, str, tuple[float, float]]]:
    """Each metric of the columns: (metric, criterion, value type, range), in the order
    `aggregate` lists them."""
    for evaluator in evaluators:
        criterion = evaluator.criterion
        yield criterion, criterion, evaluator.value_type, evaluator.score_range
        for name in columns.sub_score_names(criterion):
            yield f"{criterion}.{name}", criterion, "score", evaluator.sub_score_range


def _spilled_estimate(
    columns: SpilledColumns,
    metric: str,
    criterion: str,
    value_type: str,
    score_range: tuple[float, float],
    confidence: float,
) -> MetricEstimate:
    """`_column_estimate` from the columns' files, a block at a time: the same figures."""
    from oloproof_core.results.columns.spill import Spill

    pass_fail = value_type == "pass_fail"
    found = columns.metric_figures(metric, None if pass_fail else score_range)
    reading = columns.reading_file(metric)
    if not pass_fail and reading is None:  # the store did not read it in reading order
        column = columns.metric_values(criterion, metric[len(criterion) + 1 :] or None)
        return _column_estimate(
            metric, criterion, column, value_type, score_range, confidence, columns.order_keys()
        )
    n_observed = found.n_observed
    if pass_fail:
        interval = proportion_interval(found.successes, n_observed, found.n_missing, confidence)
        estimate = found.successes / n_observed if n_observed else None
    else:
        assert reading is not None
        low, high = score_range
        interval = stats.spilled_mean_interval(reading, Spill, low, high, confidence)
        estimate = found.total / n_observed if n_observed else None
    return MetricEstimate(
        metric=metric, estimate=estimate, interval=interval, n_observed=n_observed,
        n_missing=found.n_missing, method=CLOPPER_PEARSON if pass_fail else BETTING,
        confidence=confidence, value_type=value_type, score_range=score_range,
        criterion=criterion,
    )  # fmt: skip


def _column_estimate(
    metric: str,
    criterion: str,
    column: FloatArray,
    value_type: str,
    score_range: tuple[float, float],
    confidence: float,
    keys: Keys,
) -> MetricEstimate:
    """`estimate_metric` without clusters, from a column (NaN where missing): the same
    figures, with no list of values made."""
    import numpy as np

    observed = column[~np.isnan(column)]
    n_observed = int(observed.size)
    n_missing = int(column.size) - n_observed
    if value_type == "pass_fail":
        successes = int((observed >= 1.0).sum())
        interval = proportion_interval(successes, n_observed, n_missing, confidence)
        estimate = successes / n_observed if n_observed else None
        method = CLOPPER_PEARSON
    else:
        low, high = score_range
        interval = stats.completed_mean_interval(column, low, high, confidence, keys=keys)
        estimate = math.fsum(observed.tolist()) / n_observed if n_observed else None
        method = BETTING
    return MetricEstimate(
        metric=metric, estimate=estimate, interval=interval, n_observed=n_observed,
        n_missing=n_missing, method=method, confidence=confidence, value_type=value_type,
        score_range=score_range, criterion=criterion,
    )  # fmt: skip


def case_clusters(cases: Sequence[CaseResult]) -> list[str] | None:
    """Each case's cluster, or None when no case has one; an unclustered case stands alone."""
    if all(case.cluster is None for case in cases):
        return None
    return [case.cluster if case.cluster is not None else f"\0{case.id}" for case in cases]


def _iid_figures(
    values: Sequence[float | None],
    observed: list[float],
    value_type: str,
    score_range: tuple[float, float],
    confidence: float,
    keys: Sequence[str] | None,
) -> tuple[float | None, Interval, str]:
    """Estimate, interval and method for independent cases."""
    n_missing = len(values) - len(observed)
    if value_type == "pass_fail":
        successes = sum(1 for value in observed if value >= 1.0)
        interval = proportion_interval(successes, len(observed), n_missing, confidence)
        return (successes / len(observed) if observed else None), interval, CLOPPER_PEARSON
    low, high = score_range
    order = None
    if keys is not None:
        order = [k for k, v in zip(keys, values, strict=True) if v is not None]
        order += [k for k, v in zip(keys, values, strict=True) if v is None]
    interval = stats.mean_interval(observed, n_missing, low, high, confidence, keys=order)
    estimate = math.fsum(observed) / len(observed) if observed else None
    return estimate, interval, BETTING


def estimate_metric(
    metric: str,
    criterion: str,
    values: Sequence[float | None],
    value_type: str,
    score_range: tuple[float, float],
    confidence: float,
    clusters: Sequence[str] | None = None,
    *,
    keys: Sequence[str] | None = None,
) -> MetricEstimate:
    """Estimate over the observed values, interval over every completion of the missing ones.

    With clusters (Miller 2024, "Adding Error Bars to Evals", §3.2) the interval is
    the betting interval on cluster means, valid for any number of clusters
    (`oloproof_core.stats._cluster_betting`), widened if needed to contain the
    estimate; below `FEW_CLUSTERS` clusters the estimate carries a warning.

    ``keys`` (the cases' ids, aligned with ``values``) fix the order in which the
    betting intervals read the values: the same cases in any order give the
    same figures (``oloproof_core.stats._order``).
    """
    observed = [value for value in values if value is not None]
    n_missing = len(values) - len(observed)
    estimate, interval, method = _iid_figures(
        values, observed, value_type, score_range, confidence, keys
    )
    n_clusters = None
    if clusters is not None:
        low, high = (0.0, 1.0) if value_type == "pass_fail" else score_range
        interval = stats.clustered_mean_interval(values, clusters, low, high, confidence)
        if estimate is not None:
            interval = Interval(min(interval.lower, estimate), max(interval.upper, estimate))
        n_clusters = len(set(clusters))
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
        n_clusters=n_clusters,
        warning=None if n_clusters is None else stats.few_clusters_warning(n_clusters),
    )
