"""A result's labelled figures: the combined interval, the paired one, the calibration.

`Result.labelled`, `Result.calibration`, the gate's rules and comparisons read
labels through these, so each figure is computed one way.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Protocol

from oloproof_core.labels._calibration import (
    Calibration,
    judge_against_people,
    person_against_person,
)
from oloproof_core.labels._labelled import LabelledEstimate, labelled_difference, labelled_estimate
from oloproof_core.results.compare._values import RunCases, values_by_case

if TYPE_CHECKING:
    from oloproof_core.labels._metric_labels import MetricLabels
    from oloproof_core.results.estimate import MetricEstimate

__all__ = ["judge_calibration", "labelled_change", "labelled_figure", "people_agreement"]


class LabelledRun(RunCases, Protocol):
    """What the labelled figures take of a run (a `Result` has it, and calls these):
    its cases, its metrics by name and its labels."""

    @property
    def labels(self) -> Mapping[str, MetricLabels]: ...

    def metric(self, name: str) -> MetricEstimate: ...


def labelled_figure(result: LabelledRun, metric: str, confidence: float) -> LabelledEstimate | None:
    """The metric's interval from its verdicts and labels; None without labelled draws."""
    labels = result.labels.get(metric)
    if labels is None:
        return None
    stored = result.metric(metric)
    values = values_by_case(result, stored)
    return labelled_estimate(
        case_ids=list(values),
        judge_values=list(values.values()),
        probabilities=labels.probabilities,
        draws=labels.draws,
        truth=labels.truth,
        score_range=stored.score_range,
        confidence=confidence,
        value_type=stored.value_type,
    )


def labelled_change(
    baseline: LabelledRun, candidate: LabelledRun, metric: str, confidence: float
) -> LabelledEstimate | None:
    """Candidate minus baseline from both runs' verdicts and labels on one queue's draws."""
    before, after = baseline.labels.get(metric), candidate.labels.get(metric)
    if before is None or after is None or before.sample != after.sample:
        return None
    stored = candidate.metric(metric)
    old = values_by_case(baseline, baseline.metric(metric))
    new = values_by_case(candidate, stored)
    if set(old) != set(new):
        return None  # a queue is drawn over one set of cases
    ids = list(new)
    return labelled_difference(
        case_ids=ids,
        baseline_values=[old[case] for case in ids],
        candidate_values=[new[case] for case in ids],
        probabilities=after.probabilities,
        draws=after.draws,
        baseline_truth=before.truth,
        candidate_truth=after.truth,
        score_range=stored.score_range,
        confidence=confidence,
        value_type=stored.value_type,
    )


def judge_calibration(result: LabelledRun, metric: str, confidence: float) -> Calibration | None:
    """The judge against people on every labelled case of the run (drawn or not)."""
    labels = result.labels.get(metric)
    if labels is None:
        return None
    stored = result.metric(metric)
    return judge_against_people(
        values_by_case(result, stored),
        labels.truth,
        value_type=stored.value_type,
        score_range=stored.score_range,
        confidence=confidence,
    )


def people_agreement(result: LabelledRun, metric: str, confidence: float) -> Calibration | None:
    """One person against another, on the cases two people labelled."""
    labels = result.labels.get(metric)
    if labels is None:
        return None
    stored = result.metric(metric)
    return person_against_person(
        labels.pairs,
        value_type=stored.value_type,
        score_range=stored.score_range,
        confidence=confidence,
    )
