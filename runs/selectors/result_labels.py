"""A recorded run's labels in the engine's shape (`oloproof_core.labels.MetricLabels`), per
criterion, so a `Result` loaded from the store carries them and the library, the gate and
a comparison compute the labelled figures the one way the engine does.

Per criterion that people labelled: `truth` over every labelled case, however and
whenever the label was given (for calibration and the combined figure), the queue's
probabilities and its draws up to the first one waiting for a label (computed from the
run's label seed and its cases, never stored; none once every case the judge scored is
labelled), and the first two people's values per case labelled twice. The labels of all
criteria are read together: the run's keys in two queries (or none, kept a while for a
finished run), then one per 900 keys, and one for the seed.
"""

from __future__ import annotations

from collections.abc import Iterator

import oloproof_core.labels as labels_engine
from metrics.batching import KEY_BATCH, batches
from metrics.models import MetricEstimate
from runs.models import Label, Run
from runs.selectors.label_cases import JudgeColumn, judge_column, run_label_keys
from runs.selectors.label_draws import label_seed, queue_of


def run_result_labels(*, run: Run) -> dict[str, labels_engine.MetricLabels]:
    """The run's labels per criterion; empty when no one labelled what it judged."""
    if run.dataset_id is None:
        return {}
    by_criterion = _labels_by_criterion(run, run_label_keys(run=run))
    criteria = set(MetricEstimate.objects.filter(run_id=run.pk).values_list("criterion", flat=True))
    found: dict[str, labels_engine.MetricLabels] = {}
    seed: str | None = None
    for criterion, given in sorted(by_criterion.items()):
        if criterion not in criteria:
            continue
        seed = label_seed(run) if seed is None else seed
        column = judge_column(run=run, criterion=criterion)
        found[criterion] = _metric_labels(run, criterion, given, column, seed)
    return found


def _metric_labels(
    run: Run, criterion: str, given: dict[str, list[float]], column: JudgeColumn, seed: str
) -> labels_engine.MetricLabels:
    truth = {case: sum(values) / len(values) for case, values in given.items()}
    chance = 1.0 / len(column.case_ids) if column.case_ids else 1.0
    judged = {
        case
        for case, value in zip(column.case_ids, column.values, strict=True)
        if value is not None
    }
    return labels_engine.MetricLabels(
        criterion=criterion,
        sample=seed,
        probabilities=dict.fromkeys(column.case_ids, chance),
        draws=_draws_until_unlabelled(queue_of(run, column, seed=seed), judged, truth),
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


def _draws_until_unlabelled(
    queue: Iterator[labels_engine.Draw], judged: set[str], truth: dict[str, float]
) -> tuple[labels_engine.Draw, ...]:
    """The queue's draws up to and with the first on a judged case no one labelled; none
    when every judged case is labelled (the figure is then the people's)."""
    if judged <= truth.keys():
        return ()
    draws: list[labels_engine.Draw] = []
    for draw in queue:
        draws.append(draw)
        if draw.case_id in judged and draw.case_id not in truth:
            break
    return tuple(draws)
