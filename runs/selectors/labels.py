"""Reading people's labels of a run's metric, and what they say about its judge.

A label counts for a run when it was given for what this run judged: the same input,
output and expected value (its label key). `truth_by_case` is the people's value of
each labelled case (the mean over its labellers); `labelled_metric` the combined
figure from the judge's verdicts and the labelled random draws of the review queue
(every label counts, however and whenever it was given; a run labelled on every case
the judge scored has the people's figure, exact);
`run_calibration` how far the judge agrees with people, `people_agreement` how far
people agree with each other (the first two to label each case).

`labelled_metric`, `run_calibration` and `people_agreement` read as `user` (pages and
the API pass the request's); without one they read as the process itself.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from oloproof_core.labels import (
    Calibration,
    LabelledEstimate,
    judge_against_people,
    person_against_person,
)
from runs.access import LOCAL, Actor, run_for
from runs.models import Label, Run
from runs.selectors.annotations import DISAGREEMENT_GAP
from runs.selectors.label_cases import (
    JudgeColumn,
    LabelledMetric,
    judge_column,
    labelled_metric_of,
)
from runs.selectors.label_draws import (
    DrawsRead,
    combined_estimate,
    draws_read,
    labels_of_run,
    mean_value,
    queue_of,
)
from runs.selectors.review_queue import ReviewQueue, review_queue

__all__ = [
    "CaseLabels",
    "LabelReport",
    "PersonLabel",
    "ReviewQueue",
    "labelled_metric",
    "metric_labels",
    "people_agreement",
    "review_queue",
    "run_calibration",
    "run_labels",
    "truth_by_case",
]


@dataclass(frozen=True, slots=True)
class PersonLabel:
    author: str
    value: float
    note: str
    created_at: datetime
    updated_at: datetime


@dataclass(frozen=True, slots=True)
class CaseLabels:
    """A case's labels for this run's output, each person's, with what they add up to."""

    case_id: str
    judge_value: float | None
    labels: list[PersonLabel]
    mean: float
    people_disagree: bool
    """People gave opposite pass/fail values, or scores more than half the range apart."""
    judge_disagrees: bool
    """The people's value is the other side of the judge's (pass/fail), or more than half
    the range from it (a score)."""


def _labels_of_run(run: Run, criterion: str) -> dict[str, list[Label]]:
    """Case id -> the labels of this run's output of the case, oldest first."""
    return labels_of_run(run, criterion)


def truth_by_case(run: Run, criterion: str) -> dict[str, float]:
    """Case id -> the mean of people's values for this run's output of the case."""
    return {case: mean_value(given) for case, given in _labels_of_run(run, criterion).items()}


def _apart(first: float, second: float, metric: LabelledMetric) -> bool:
    low, high = metric.score_range
    if metric.value_type == "pass_fail":
        middle = (low + high) / 2.0
        return (first > middle) != (second > middle)
    return abs(first - second) > DISAGREEMENT_GAP * (high - low)


def run_labels(*, user: Actor, run_id: int, criterion: str) -> list[CaseLabels]:
    """The labelled cases of a run's metric, in the run's order, with every person's label."""
    read = _read(user, run_id, criterion)
    return _case_labels(read, _labels_of_run(read.run, criterion))


def _case_labels(read: _Read, found: dict[str, list[Label]]) -> list[CaseLabels]:
    items = []
    for case_id, judged in zip(read.column.case_ids, read.column.values, strict=True):
        given = found.get(case_id)
        if not given:
            continue
        values = [label.value for label in given]
        mean = mean_value(given)
        items.append(
            CaseLabels(
                case_id=case_id,
                judge_value=judged,
                labels=[
                    PersonLabel(
                        item.author_name, item.value, item.note, item.created_at, item.updated_at
                    )
                    for item in given
                ],
                mean=mean,
                people_disagree=_apart(min(values), max(values), read.metric),
                judge_disagrees=judged is not None and _apart(judged, mean, read.metric),
            )
        )
    return items


@dataclass(frozen=True, slots=True)
class _Read:
    run: Run
    metric: LabelledMetric
    column: JudgeColumn


def _read(user: Actor, run_id: int, criterion: str) -> _Read:
    run = run_for(user=user, run_id=run_id)
    metric = labelled_metric_of(run=run, criterion=criterion)
    return _Read(run, metric, judge_column(run=run, criterion=criterion))


def _drawn(read: _Read, found: dict[str, list[Label]]) -> DrawsRead:
    """The queue's draws up to the first one waiting for a label (computed, not stored)."""
    return draws_read(
        draws=queue_of(read.run, read.column), column=read.column, found=found, after=None
    )


def _labelled(read: _Read, drawn: DrawsRead) -> LabelledEstimate | None:
    return combined_estimate(metric=read.metric, column=read.column, draws=drawn)


def _judge_calibration(read: _Read, found: dict[str, list[Label]]) -> Calibration | None:
    judged = dict(zip(read.column.case_ids, read.column.values, strict=True))
    truth = {case_id: mean_value(given) for case_id, given in found.items()}
    return judge_against_people(judged, truth, **_scale(read.metric))


def _people(read: _Read, found: dict[str, list[Label]]) -> Calibration | None:
    pairs = [(given[0].value, given[1].value) for given in found.values() if len(given) >= 2]
    return person_against_person(pairs, **_scale(read.metric))


def _scale(metric: LabelledMetric) -> dict[str, Any]:
    return {
        "value_type": metric.value_type,
        "score_range": metric.score_range,
        "confidence": metric.confidence,
    }


def labelled_metric(run_id: int, criterion: str, *, user: Actor = LOCAL) -> LabelledEstimate | None:
    """The metric's combined figure; None until the queue's first draw is labelled (or
    every case the judge scored is)."""
    read = _read(user, run_id, criterion)
    return _labelled(read, _drawn(read, _labels_of_run(read.run, criterion)))


def run_calibration(run_id: int, criterion: str, *, user: Actor = LOCAL) -> Calibration | None:
    """The judge against people over every labelled case the judge has a verdict on."""
    read = _read(user, run_id, criterion)
    return _judge_calibration(read, _labels_of_run(read.run, criterion))


def people_agreement(run_id: int, criterion: str, *, user: Actor = LOCAL) -> Calibration | None:
    """The first person to label each case against the second, over cases two labelled."""
    read = _read(user, run_id, criterion)
    return _people(read, _labels_of_run(read.run, criterion))


@dataclass(frozen=True, slots=True)
class LabelReport:
    """Where a run's metric stands with people's labels: the judge-only figure, the
    combined one, the judge's calibration and people's agreement with each other."""

    run_id: int
    metric: LabelledMetric
    labelled: LabelledEstimate | None
    calibration: Calibration | None
    people: Calibration | None
    labelled_cases: int
    cases: list[CaseLabels]
    """Every labelled case, in the run's order."""
    next_case: str | None = None
    """The case of the queue's first draw waiting for a label (None when none is)."""

    @property
    def judge_only(self) -> dict[str, Any]:
        row = self.metric.estimate
        return {
            "estimate": row.estimate,
            "interval": {"lower": row.lower, "upper": row.upper},
            "method": row.method,
            "confidence": row.confidence,
            "n_observed": row.n_observed,
            "n_missing": row.n_missing,
        }

    def default_width(self) -> float | None:
        """Half the combined interval's width: what `labels_needed` aims at unless told
        (nothing once the figure is known: no label narrows it)."""
        if self.labelled is None or self.labelled.known:
            return None
        return self.labelled.interval.width / 2.0

    def labels_needed(self, width: float | None = None) -> int | None:
        chosen = width if width is not None else self.default_width()
        if self.labelled is None or chosen is None:
            return None
        return self.labelled.labels_needed(chosen)

    def to_dict(self, width: float | None = None) -> dict[str, Any]:
        chosen = width if width is not None else self.default_width()
        return {
            "run_id": self.run_id,
            "metric": self.metric.criterion,
            "value_type": self.metric.value_type,
            "score_range": list(self.metric.score_range),
            "judge_only": self.judge_only,
            "labelled": None if self.labelled is None else self.labelled.to_dict(),
            "calibration": None if self.calibration is None else self.calibration.to_dict(),
            "people": None if self.people is None else self.people.to_dict(),
            "labelled_cases": self.labelled_cases,
            "known": self.labelled is not None and self.labelled.known,
            "cases_left": None if self.labelled is None else self.labelled.cases_left,
            "next_case": self.next_case,
            "width": chosen,
            "labels_needed": self.labels_needed(chosen),
        }


def metric_labels(*, user: Actor, run_id: int, criterion: str) -> LabelReport:
    """The judge-only and combined figures, calibration and people's agreement, read once."""
    read = _read(user, run_id, criterion)
    found = _labels_of_run(read.run, criterion)
    drawn = _drawn(read, found)
    return LabelReport(
        run_id=read.run.pk,
        metric=read.metric,
        labelled=_labelled(read, drawn),
        calibration=_judge_calibration(read, found),
        people=_people(read, found),
        labelled_cases=len(found),
        cases=_case_labels(read, found),
        next_case=None if drawn.next_draw is None else drawn.next_draw.case_id,
    )
