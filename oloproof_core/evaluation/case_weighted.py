"""The figures of a run whose cases ran different numbers of times (`repeats: auto`).

A release's figure is the mean over cases of each case's mean over its tries. When
every case ran as often as every other, the mean over rows is that figure; when the
tries differ, a case run five times would weigh five times as much as a case run
once. Here each case's tries become its mean first, and the figures are taken over
those means: bounded in the metric's range, one independent unit a case (or a
dataset's own cluster of cases), so the betting interval for a bounded mean holds as
it does for any score. A case with a try that has no value is missing, bounded at its
worst and best, as a missing case is everywhere else.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterator, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING

import numpy as np

from oloproof_core.cases.case import CaseResult
from oloproof_core.evaluation.repeats import case_id_of
from oloproof_core.judging.evaluators import Evaluator
from oloproof_core.results.columns.case_columns import CaseColumns
from oloproof_core.results.estimate import MetricEstimate
from oloproof_core.results.result import Result

if TYPE_CHECKING:
    from oloproof_core.results.columns.case_columns import FloatArray

OVER_CASE_MEANS = "; over each case's mean of its tries, each case weighed once"


def case_weighted_metrics(
    cases: Sequence[CaseResult], evaluators: Sequence[Evaluator], confidence: float
) -> list[MetricEstimate]:
    """`aggregate`'s metrics, in its order, each over the cases' means of their tries."""
    cases_of = CasesOfTries(*_ids_and_clusters(cases))
    return [
        cases_of.estimate(metric, criterion, values, value_type, score_range, confidence)
        for metric, criterion, values, value_type, score_range in _named_columns(cases, evaluators)
    ]


def case_weighted_metric(result: Result, stored: MetricEstimate, level: float) -> MetricEstimate:
    """One of a recorded run's metrics over case means, at another confidence level."""
    cases_of = CasesOfTries(*_ids_and_clusters(result.cases))
    values = _values(result.cases, stored.criterion, stored.metric.partition(".")[2] or None)
    return cases_of.estimate(
        stored.metric, stored.criterion, values, stored.value_type, stored.score_range, level
    )


class CasesOfTries:
    """Which case each try is of: coded once, shared by every metric of a run."""

    def __init__(self, ids: Sequence[str], clusters: list[str] | None) -> None:
        self.case_ids = list(dict.fromkeys(case_id_of(case_id) for case_id in ids))
        index = {case_id: position for position, case_id in enumerate(self.case_ids)}
        self.codes = np.fromiter((index[case_id_of(i)] for i in ids), np.intp, len(ids))
        self.tries = np.bincount(self.codes, minlength=len(self.case_ids))
        self.clusters = case_clusters(clusters, self.case_ids, self.codes, "\0")

    def estimate(
        self,
        metric: str,
        criterion: str,
        values: FloatArray,
        value_type: str,
        score_range: tuple[float, float],
        confidence: float,
    ) -> MetricEstimate:
        from oloproof_core.evaluation.aggregate import estimate_metric

        sums = np.bincount(self.codes, weights=values, minlength=len(self.case_ids))
        means = [None if mean != mean else mean for mean in (sums / self.tries).tolist()]
        low_high = (0.0, 1.0) if value_type == "pass_fail" else score_range
        found = estimate_metric(
            metric, criterion, means, "score", low_high, confidence, self.clusters,
            keys=self.case_ids,
        )  # fmt: skip
        return replace(
            found,
            value_type=value_type,
            score_range=score_range,
            method=found.method + OVER_CASE_MEANS,
        )


def _ids_and_clusters(cases: Sequence[CaseResult]) -> tuple[list[str], list[str] | None]:
    if isinstance(cases, CaseColumns):
        return list(cases.ids), cases.cluster_keys()
    return [case.id for case in cases], [str(case.cluster or case.id) for case in cases]


def _named_columns(
    cases: Sequence[CaseResult], evaluators: Sequence[Evaluator]
) -> Iterator[tuple[str, str, FloatArray, str, tuple[float, float]]]:
    """Each metric `aggregate` lists: name, criterion, values (NaN: none), type, range."""
    for evaluator in evaluators:
        criterion = evaluator.criterion
        yield (
            criterion,
            criterion,
            _values(cases, criterion, None),
            evaluator.value_type,
            evaluator.score_range,
        )
        for name in _sub_score_names(cases, criterion):
            values = _values(cases, criterion, name)
            yield f"{criterion}.{name}", criterion, values, "score", evaluator.sub_score_range


def _sub_score_names(cases: Sequence[CaseResult], criterion: str) -> list[str]:
    if isinstance(cases, CaseColumns):
        return list(cases.sub_score_names(criterion))
    return list(dict.fromkeys(name for case in cases for name in case.verdicts[criterion].scores))


def _values(cases: Sequence[CaseResult], criterion: str, sub_score: str | None) -> FloatArray:
    if isinstance(cases, CaseColumns):
        return cases.metric_values(criterion, sub_score)
    found = []
    for case in cases:
        verdict = case.verdicts[criterion]
        value = verdict.value if sub_score is None else verdict.scores.get(sub_score)
        found.append(np.nan if value is None or verdict.value is None else float(value))
    return np.asarray(found, dtype=np.float64)


def case_clusters(
    clusters: Sequence[Hashable] | None, case_ids: list[str], codes: np.ndarray, mark: str
) -> list[str] | None:
    """Each case's dataset cluster (`clusters` per try, `codes` its case's position),
    a case with none standing alone as `mark + id`; None when every case is its tries'
    own cluster."""
    if clusters is None:
        return None
    first = np.unique(codes, return_index=True)[1]
    labels = [str(clusters[position]) for position in first.tolist()]
    pairs = list(zip(labels, case_ids, strict=True))
    own = [label in (case_id, f"{mark}{case_id}") for label, case_id in pairs]
    if all(own):
        return None
    return [
        f"{mark}{case_id}" if mine else label
        for (label, case_id), mine in zip(pairs, own, strict=True)
    ]
