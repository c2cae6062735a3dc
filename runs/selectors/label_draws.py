"""The review queue of a run's metric, and how far people's labels go along it.

The queue's draws are a pure function of the run's label seed (its dataset's, fixed
when the dataset was first recorded) and the run's case ids
(`oloproof_core.labels.review_draws`): they are computed as they are read, and no read
writes anything. Every run on the same cases draws the same queue.

A label counts wherever it came from (the queue, the library, a file) and whenever it
was given: the run's labels are read whole, for every case of the run (its label keys,
kept a while for a finished run, then the project's labels of the criterion on them),
and the combined figure uses the draws in order up to the first one whose case no one
has labelled. Once every case the judge scored is labelled, no draw is needed: the
figure is the people's.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

from metrics.batching import KEY_BATCH, batches
from oloproof_core.labels import Draw, LabelledEstimate, labelled_estimate, review_draws
from runs.models import Dataset, Label, Run
from runs.selectors.label_cases import (
    CaseToLabel,
    JudgeColumn,
    LabelledMetric,
    cases_to_label,
    dataset_of,
    run_label_keys,
)

MAX_DRAWS_PAST = 10_000
"""How far past the first unlabelled draw a skip may look before giving up."""


def labels_by_key(
    *, project_id: int, criterion: str, keys: Iterable[str]
) -> dict[str, list[Label]]:
    """People's labels of `criterion` on these keys, oldest first.

    For many keys (a whole run's), one query reads the project's labels of the criterion
    when there are no more of them than keys (people label hundreds of cases, a run has
    thousands), and keeps those on the keys; otherwise one query per 900 keys.
    """
    wanted = dict.fromkeys(keys)
    found: dict[str, list[Label]] = {}
    if len(wanted) > KEY_BATCH:
        scope = Label.objects.filter(project_id=project_id, criterion=criterion)
        every = list(scope.order_by("created_at", "id")[: len(wanted) + 1])
        if len(every) <= len(wanted):
            for label in every:
                if label.key in wanted:
                    found.setdefault(label.key, []).append(label)
            return found
    for batch in batches(wanted, KEY_BATCH):
        rows = Label.objects.filter(
            project_id=project_id, criterion=criterion, key__in=batch
        ).order_by("created_at", "id")
        for label in rows:
            found.setdefault(label.key, []).append(label)
    return found


def mean_value(labels: list[Label]) -> float:
    return sum(label.value for label in labels) / len(labels)


def labels_of_run(run: Run, criterion: str) -> dict[str, list[Label]]:
    """Case id -> the labels of this run's output of the case, oldest first."""
    keys = run_label_keys(run=run)
    by_key = labels_by_key(project_id=run.project_id, criterion=criterion, keys=keys.values())
    return {case_id: by_key[key] for case_id, key in keys.items() if key in by_key}


def label_seed(run: Run) -> str:
    """The seed of the run's review queues: its dataset's, fixed when it was recorded."""
    return str(Dataset.objects.filter(pk=dataset_of(run)).values_list("label_seed", flat=True)[0])


def queue_of(run: Run, column: JudgeColumn, *, seed: str | None = None) -> Iterator[Draw]:
    """The run's review queue from its first draw, without end (the reader stops)."""
    return review_draws(column.case_ids, label_seed(run) if seed is None else seed)


@dataclass(slots=True)
class DrawsRead:
    """The draws read, people's value of each labelled case, and the next draw to label."""

    draws: list[Draw] = field(default_factory=list)
    truth: dict[str, float] = field(default_factory=dict)
    labels_total: int = 0
    """People's labels of the run's outputs (two people on one case count twice)."""
    next_draw: Draw | None = None


def draws_read(
    *, draws: Iterator[Draw], column: JudgeColumn, found: dict[str, list[Label]], after: int | None
) -> DrawsRead:
    """The draws up to the first whose case the judge scored and no one labelled, past
    position `after` when given (a skip); none once every such case is labelled."""
    read = DrawsRead(
        truth={case: mean_value(given) for case, given in found.items()},
        labels_total=sum(len(given) for given in found.values()),
    )
    observed = {
        case
        for case, value in zip(column.case_ids, column.values, strict=True)
        if value is not None
    }
    if observed <= read.truth.keys():
        return read  # every case the judge scored is labelled: nothing is left to draw
    first_unlabelled: int | None = None
    for draw in draws:
        read.draws.append(draw)
        if draw.case_id not in observed or draw.case_id in read.truth:
            continue
        if after is None or draw.position > after:
            read.next_draw = draw
            return read
        first_unlabelled = draw.position if first_unlabelled is None else first_unlabelled
        if draw.position - first_unlabelled >= MAX_DRAWS_PAST:
            return read
    return read


def next_case(run: Run, read: DrawsRead) -> CaseToLabel | None:
    """The case of the next draw to label, as a label sees it."""
    if read.next_draw is None:
        return None
    return cases_to_label(run=run, case_ids=[read.next_draw.case_id])[read.next_draw.case_id]


def combined_estimate(
    *, metric: LabelledMetric, column: JudgeColumn, draws: DrawsRead
) -> LabelledEstimate | None:
    """The engine's combined figure from the run's verdicts and people's labels."""
    chance = 1.0 / len(column.case_ids) if column.case_ids else 1.0
    return labelled_estimate(
        case_ids=column.case_ids,
        judge_values=column.values,
        probabilities=dict.fromkeys(column.case_ids, chance),
        draws=draws.draws,
        truth=draws.truth,
        score_range=metric.score_range,
        confidence=metric.confidence,
        value_type=metric.value_type,
    )
