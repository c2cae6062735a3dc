"""What labels are read against: a run's metric, its judge's values, its cases' label keys.

A label is keyed by what was judged (`label_key(input, output, expected)`): the
dataset row's input and expected value and the run's output. Keys are computed here
for the cases asked about, a batch of lookups per 900 cases, never one per case. A
case whose system failed has no output to label.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from django.core.cache import cache
from django.db.models import QuerySet

from metrics.batching import KEY_BATCH, batches
from metrics.models import CaseVerdict, MetricEstimate
from metrics.selectors import runs_value_columns
from oloproof_core.labels import label_key
from runs.errors import InvalidRequestError, NotFoundError
from runs.models import CaseResult, DatasetCase, Run


@dataclass(frozen=True, slots=True)
class LabelledMetric:
    """The run's metric a label is about: its scale and confidence."""

    criterion: str
    value_type: str
    score_range: tuple[float, float]
    confidence: float
    estimate: MetricEstimate


def labelled_metric_of(*, run: Run, criterion: str) -> LabelledMetric:
    """The run's metric named `criterion`, or a clear error naming the metrics it has."""
    rows = {row.metric: row for row in MetricEstimate.objects.filter(run_id=run.pk)}
    row = rows.get(criterion)
    if row is None or row.is_sub_score:
        names = ", ".join(sorted(name for name, item in rows.items() if not item.is_sub_score))
        if row is not None:
            raise InvalidRequestError(
                f"{criterion!r} is a sub-score of {row.criterion!r}: label the criterion itself"
            )
        raise NotFoundError(
            f"run {run.pk} has no metric {criterion!r}"
            + (f" (its metrics: {names})" if names else " (it has no metrics yet)")
        )
    low, high = (float(bound) for bound in (row.score_range or [0.0, 1.0])[:2])
    return LabelledMetric(
        criterion=criterion,
        value_type=row.value_type,
        score_range=(low, high),
        confidence=row.confidence,
        estimate=row,
    )


def dataset_of(run: Run) -> int:
    """The id of the run's dataset; a run still queued has none, and nothing to label."""
    if run.dataset_id is None:
        raise InvalidRequestError(f"run {run.pk} has not read its dataset yet: nothing to label")
    return run.dataset_id


@dataclass(frozen=True, slots=True)
class JudgeColumn:
    """The run's cases in its order and the criterion's verdict on each (None: missing)."""

    case_ids: list[str]
    values: list[float | None]


def judge_column(*, run: Run, criterion: str) -> JudgeColumn:
    """One query for a concluded run (its stored value columns), two for one without."""
    stored = runs_value_columns(run_ids=[run.pk]).get(run.pk)
    if stored is not None and criterion in stored.values:
        numbers = stored.values[criterion].tolist()
        return JudgeColumn(
            list(stored.ids), [None if math.isnan(value) else value for value in numbers]
        )
    ids = list(
        CaseResult.objects.filter(run=run)
        .order_by("position", "id")
        .values_list("case_id", flat=True)
    )
    verdicts = dict(
        CaseVerdict.objects.filter(run_id=run.pk, criterion=criterion).values_list(
            "case_id", "value"
        )
    )
    return JudgeColumn(ids, [verdicts.get(case_id) for case_id in ids])


@dataclass(frozen=True, slots=True)
class CaseToLabel:
    """One case of a run as a label sees it; `key` is None when the system failed on it."""

    case_id: str
    input: Any
    expected: Any
    output: Any
    error: str
    key: str | None


def cases_to_label(*, run: Run, case_ids: Iterable[str] | None = None) -> dict[str, CaseToLabel]:
    """The run's cases among `case_ids` (all when None; unknown ids are left out), keyed.

    The whole run is read in two queries; named cases in two per 900 of them.
    """
    if case_ids is None:
        results = CaseResult.objects.filter(run=run)
        rows = DatasetCase.objects.filter(
            dataset_id=dataset_of(run), case_id__in=results.values("case_id")
        )
        return _keyed(results, rows)
    found: dict[str, CaseToLabel] = {}
    for batch in batches(dict.fromkeys(case_ids), KEY_BATCH):
        results = CaseResult.objects.filter(run=run, case_id__in=batch)
        rows = DatasetCase.objects.filter(dataset_id=dataset_of(run), case_id__in=batch)
        found.update(_keyed(results, rows))
    return found


def _keyed(results: QuerySet[CaseResult], rows: QuerySet[DatasetCase]) -> dict[str, CaseToLabel]:
    content = {
        case_id: (data, wanted)
        for case_id, data, wanted in rows.values_list("case_id", "input", "expected")
    }
    found: dict[str, CaseToLabel] = {}
    for case_id, output, error in results.values_list("case_id", "output", "error_type"):
        data, wanted = content.get(case_id, (None, None))
        key = None if error else label_key(data, output, wanted)
        found[case_id] = CaseToLabel(case_id, data, wanted, output, error, key)
    return found


LABEL_KEYS_CACHE_S = 3600


def run_label_keys(*, run: Run) -> dict[str, str]:
    """Case id -> label key of every case of the run the system did not fail on.

    A finished run's keys never change, and digesting every case's content is most of
    a metric page's time at 10,000 cases, so they are kept in the cache a while.
    """
    cache_key = None
    if run.finished_at is not None:
        cache_key = f"oloproof:label-keys:{run.pk}:{run.finished_at.timestamp():.6f}"
        kept = cache.get(cache_key)
        if kept is not None:
            return dict(kept)
    cases = cases_to_label(run=run)
    keys = {case_id: case.key for case_id, case in cases.items() if case.key is not None}
    if cache_key is not None:
        cache.set(cache_key, keys, LABEL_KEYS_CACHE_S)
    return keys
