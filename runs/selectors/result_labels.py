"""A recorded run's labels in the engine's shape (`oloproof_core.labels.MetricLabels`), per
criterion, so a `Result` loaded from the store carries them and the library, the gate and
a comparison compute the labelled figures the one way the engine does.

Per criterion that people labelled: `truth` over every labelled case (for calibration),
the review sample's probabilities and its recorded draws up to the first one waiting for
a label (for the combined figure), and the first two people's values per case labelled
twice. The labels of all criteria are read together: the run's keys in two queries, then
one per 900 keys, one for the samples and one per 200 draws read.
"""

from __future__ import annotations

import oloproof_core.labels as labels_engine
from metrics.batching import KEY_BATCH, batches
from metrics.models import MetricEstimate
from runs.models import Label, ReviewDraw, ReviewSample, Run
from runs.review_samples import DRAW_BLOCK, case_set_digest
from runs.selectors.label_cases import JudgeColumn, dataset_of, judge_column, run_label_keys


def run_result_labels(*, run: Run) -> dict[str, labels_engine.MetricLabels]:
    """The run's labels per criterion; empty when no one labelled what it judged."""
    if run.dataset_id is None:
        return {}
    by_criterion = _labels_by_criterion(run, run_label_keys(run=run))
    criteria = set(MetricEstimate.objects.filter(run_id=run.pk).values_list("criterion", flat=True))
    found: dict[str, labels_engine.MetricLabels] = {}
    samples: dict[str, ReviewSample] | None = None
    for criterion, given in sorted(by_criterion.items()):
        if criterion not in criteria:
            continue
        column = judge_column(run=run, criterion=criterion)
        if samples is None:
            samples = _samples(run, column.case_ids)
        found[criterion] = _metric_labels(run, criterion, given, column, samples.get(criterion))
    return found


def _metric_labels(
    run: Run,
    criterion: str,
    given: dict[str, list[float]],
    column: JudgeColumn,
    sample: ReviewSample | None,
) -> labels_engine.MetricLabels:
    truth = {case: sum(values) / len(values) for case, values in given.items()}
    probabilities: dict[str, float] = {}
    draws: tuple[labels_engine.Draw, ...] = ()
    if sample is not None:
        ids, chances = sample.distribution()
        probabilities = dict(zip(ids, chances, strict=True))
        judged = {
            case
            for case, value in zip(column.case_ids, column.values, strict=True)
            if value is not None
        }
        draws = _draws_until_unlabelled(sample, judged, truth)
    return labels_engine.MetricLabels(
        criterion=criterion,
        sample="" if sample is None else sample.seed,
        probabilities=probabilities,
        draws=draws,
        truth=truth,
        pairs=tuple((values[0], values[1]) for values in given.values() if len(values) >= 2),
    )


def _labels_by_criterion(run: Run, keys: dict[str, str]) -> dict[str, dict[str, list[float]]]:
    """criterion -> case id -> people's values, oldest label first."""
    cases_of: dict[str, list[str]] = {}
    for case_id, key in keys.items():
        cases_of.setdefault(key, []).append(case_id)
    found: dict[str, dict[str, list[float]]] = {}
    for batch in batches(cases_of, KEY_BATCH):
        rows = (
            Label.objects.filter(project_id=run.project_id, key__in=batch)
            .order_by("created_at", "id")
            .values_list("criterion", "key", "value")
        )
        for criterion, key, value in rows:
            for case_id in cases_of[key]:
                found.setdefault(criterion, {}).setdefault(case_id, []).append(value)
    return found


def _samples(run: Run, case_ids: list[str]) -> dict[str, ReviewSample]:
    rows = ReviewSample.objects.filter(
        project_id=run.project_id,
        dataset_id=dataset_of(run),
        split=run.split,
        case_set=case_set_digest(case_ids),
    )
    return {sample.criterion: sample for sample in rows}


def _draws_until_unlabelled(
    sample: ReviewSample, judged: set[str], truth: dict[str, float]
) -> tuple[labels_engine.Draw, ...]:
    """The recorded draws up to and with the first on a judged case no one labelled."""
    draws: list[labels_engine.Draw] = []
    start = 0
    while True:
        block = ReviewDraw.objects.filter(
            sample=sample, position__gte=start, position__lt=start + DRAW_BLOCK
        ).order_by("position")
        rows = list(block.values_list("position", "case_id", "probability"))
        if not rows:
            return tuple(draws)
        for position, case_id, probability in rows:
            draws.append(labels_engine.Draw(position, case_id, probability))
            if case_id in judged and case_id not in truth:
                return tuple(draws)
        start += DRAW_BLOCK
