"""The one writer of review samples and their draws.

A sample fixes, once per (project, dataset, split, criterion, case set), each case's
drawing probability and a random seed; every run on the same cases shares it, so
labels given for one run count for the next one whose outputs are the same. The
probabilities are the queue's design (`oloproof_core.labels.sampling_probabilities`:
uniform, the design measured to give the narrowest interval) and are kept with the
sample, so later draws use the same ones whichever run asks. Draws are
a pure function of the seed and their position: they are recorded in blocks as the
queue reaches them, and two requests recording the same block write the same rows.
"""

from __future__ import annotations

import hashlib
import json
import secrets
import struct
from collections.abc import Sequence

from django.db import IntegrityError, transaction

from oloproof_core.labels import draw_cases, sampling_probabilities
from runs.models import ReviewDraw, ReviewSample, Run
from runs.selectors.label_cases import (
    JudgeColumn,
    LabelledMetric,
    dataset_of,
    judge_column,
    labelled_metric_of,
)

DRAW_BLOCK = 200
"""Draws recorded at a time: the queue rarely needs more before the next block."""


def case_set_digest(case_ids: Sequence[str]) -> str:
    """The sha256 of the sorted case ids, one per line: which cases a sample draws from."""
    return hashlib.sha256("\n".join(sorted(case_ids)).encode()).hexdigest()


def sample_for_run(
    run: Run,
    criterion: str,
    *,
    column: JudgeColumn | None = None,
    metric: LabelledMetric | None = None,
) -> ReviewSample:
    """The review sample of `run`'s cases and `criterion`, made on first use.

    `column` and `metric`, when the caller has read them already, save their queries.
    """
    column = column if column is not None else judge_column(run=run, criterion=criterion)
    digest = case_set_digest(column.case_ids)
    found = _sample_of(run, criterion, digest)
    if found is not None:
        return found
    metric = metric if metric is not None else labelled_metric_of(run=run, criterion=criterion)
    ids, probabilities = _distribution(column, metric)
    try:
        with transaction.atomic():
            return ReviewSample.objects.create(
                project_id=run.project_id,
                dataset_id=dataset_of(run),
                split=run.split,
                criterion=criterion,
                case_set=digest,
                seed=secrets.token_hex(16),
                case_ids=json.dumps(ids, ensure_ascii=False),
                probabilities=struct.pack(f"<{len(probabilities)}d", *probabilities),
                created_from=run,
            )
    except IntegrityError:
        # Another request made it first: its seed is the one everybody draws with.
        made = _sample_of(run, criterion, digest)
        if made is None:
            raise
        return made


def _sample_of(run: Run, criterion: str, digest: str) -> ReviewSample | None:
    return ReviewSample.objects.filter(
        project_id=run.project_id,
        dataset_id=dataset_of(run),
        split=run.split,
        criterion=criterion,
        case_set=digest,
    ).first()


def _distribution(column: JudgeColumn, metric: LabelledMetric) -> tuple[list[str], list[float]]:
    """The sorted case ids and each one's drawing probability."""
    ids = sorted(column.case_ids)
    judged = dict(zip(column.case_ids, column.values, strict=True))
    probabilities = sampling_probabilities(
        [judged[case_id] for case_id in ids], metric.score_range, value_type=metric.value_type
    )
    return ids, probabilities


def ensure_draws(sample: ReviewSample, upto: int, *, have: int | None = None) -> int:
    """Record the sample's draws at positions below `upto` (whole blocks); how many there are.

    `have`, when the caller knows it, is how many draws are recorded already.
    """
    recorded = have if have is not None else ReviewDraw.objects.filter(sample=sample).count()
    if recorded >= upto:
        return recorded
    ids, probabilities = sample.distribution()
    while recorded < upto:
        draws = draw_cases(ids, probabilities, seed=sample.seed, start=recorded, count=DRAW_BLOCK)
        ReviewDraw.objects.bulk_create(
            [
                ReviewDraw(
                    sample=sample,
                    position=draw.position,
                    case_id=draw.case_id,
                    probability=draw.probability,
                )
                for draw in draws
            ],
            ignore_conflicts=True,
        )
        recorded += DRAW_BLOCK
    return recorded
