"""The review queue's draws as far as people have labelled them, read a block at a time.

The combined figure uses the draws in order up to the first one whose case has no
label for this run's output (draws on cases the judge has no verdict for, a failed
case among them, are passed over). So the draws are read from the first, 200 at a
time, with each block's cases' label keys and labels: four queries a block, however
large the run, until the first unlabelled draw. Labels are read for the drawn cases
only: a run of 10,000 cases costs what a run of 50 does.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from metrics.batching import KEY_BATCH, batches
from oloproof_core.labels import Draw, LabelledEstimate, labelled_estimate
from runs.models import Label, ReviewDraw, ReviewSample, Run
from runs.review_samples import DRAW_BLOCK, ensure_draws
from runs.selectors.label_cases import CaseToLabel, JudgeColumn, LabelledMetric, cases_to_label

MAX_BLOCKS_PAST = 50
"""How far past the first unlabelled draw a skip may look (10,000 draws) before giving up."""


@dataclass(slots=True)
class DrawsRead:
    """The draws read, the truth of their cases, and the first unlabelled draw after `after`."""

    draws: list[Draw] = field(default_factory=list)
    cases: dict[str, CaseToLabel] = field(default_factory=dict)
    truth: dict[str, float] = field(default_factory=dict)
    labels_total: int = 0
    """People's labels of the drawn cases' outputs (two people on one case count twice)."""
    next_draw: Draw | None = None


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


def draws_read(
    *,
    run: Run,
    sample: ReviewSample,
    column: JudgeColumn,
    record: bool,
    after: int | None = None,
) -> DrawsRead:
    """Read the sample's draws up to the first unlabelled one past `after` (recording more
    when `record` and the recorded ones run out)."""
    observed = {
        case
        for case, value in zip(column.case_ids, column.values, strict=True)
        if value is not None
    }
    read = DrawsRead()
    recorded: int | None = None
    start, blocks_past = 0, 0
    while blocks_past <= MAX_BLOCKS_PAST:
        if record:
            recorded = ensure_draws(sample, start + DRAW_BLOCK, have=recorded)
        block = _block(sample, start)
        if not block:
            return read
        _learn(run, sample, block, observed, read)
        skipped = False
        for draw in block:
            read.draws.append(draw)
            if draw.case_id not in observed or draw.case_id in read.truth:
                continue
            if after is None or draw.position > after:
                read.next_draw = draw
                return read
            skipped = True
        if observed <= read.truth.keys():
            return read  # every case is labelled: no draw is left to ask for
        blocks_past += skipped
        start += DRAW_BLOCK
    return read


def _block(sample: ReviewSample, start: int) -> list[Draw]:
    rows = ReviewDraw.objects.filter(
        sample=sample, position__gte=start, position__lt=start + DRAW_BLOCK
    ).order_by("position")
    return [
        Draw(position, case_id, probability)
        for position, case_id, probability in rows.values_list("position", "case_id", "probability")
    ]


def _learn(
    run: Run, sample: ReviewSample, block: list[Draw], observed: set[str], read: DrawsRead
) -> None:
    """Add the block's new cases (their keys, and the people's labels of them) to `read`."""
    new = {draw.case_id for draw in block if draw.case_id in observed} - read.cases.keys()
    if not new:
        return
    cases = cases_to_label(run=run, case_ids=sorted(new))
    read.cases.update(cases)
    cases_of: dict[str, list[str]] = {}
    for case_id, case in cases.items():
        if case.key is not None:
            cases_of.setdefault(case.key, []).append(case_id)
    labels = labels_by_key(project_id=run.project_id, criterion=sample.criterion, keys=cases_of)
    for key, given in labels.items():
        for case_id in cases_of[key]:
            read.truth[case_id] = mean_value(given)
            read.labels_total += len(given)


def combined_estimate(
    *, metric: LabelledMetric, column: JudgeColumn, sample: ReviewSample, draws: DrawsRead
) -> LabelledEstimate | None:
    """The engine's combined figure from the run's verdicts and the draws read."""
    ids, probabilities = sample.distribution()
    return labelled_estimate(
        case_ids=column.case_ids,
        judge_values=column.values,
        probabilities=dict(zip(ids, probabilities, strict=True)),
        draws=draws.draws,
        truth=draws.truth,
        score_range=metric.score_range,
        confidence=metric.confidence,
        value_type=metric.value_type,
    )
