"""The one writer of datasets and their rows: each dataset once, by its content's digest.

A run names its dataset by the digest of the rows' content; the first run to bring a
dataset writes its rows, every later one finds them. A dataset checked from its file
without its rows (`engine.DatasetFile`, at submission) has them read from the file
again as they are written, so its size never sits in memory.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence

from django.conf import settings
from django.db import transaction

import oloproof_core as engine
from metrics.batching import numbered_first_of_each
from metrics.bulk_rows import rows_insert
from runs.models import Dataset, DatasetCase
from runs.models.case_rows import CASE_ID, DATASET_CASE_COLUMNS


def _batch_size(batch_size: int | None) -> int:
    return batch_size or int(getattr(settings, "OLOPROOF_RECORD_CHUNK_SIZE", 2000))


def dataset_get_or_create(
    *,
    digest: str,
    source: str,
    splits: Mapping[str, int],
    cases: Sequence[engine.CaseResult] | Sequence[engine.Row],
    batch_size: int | None = None,
    n_cases: int | None = None,
    unrepeated_digest: str = "",
) -> Dataset:
    """The dataset with this digest; its cases are written only the first time it is seen
    (a run recorded as it goes gives none: `n_cases`, and the rows come with its batches)."""
    with transaction.atomic():
        dataset, created = Dataset.objects.get_or_create(
            digest=digest,
            defaults={
                "source": source[:1000],
                "n_cases": len(cases) if n_cases is None else n_cases,
                "splits": dict(splits),
                "unrepeated_digest": unrepeated_digest,
            },
        )
        if created and cases:
            dataset_cases_create(
                dataset_id=dataset.pk, cases=cases, batch_size=batch_size, new_dataset=True
            )
        _name_unrepeated(dataset, unrepeated_digest)
    return dataset


def _name_unrepeated(dataset: Dataset, unrepeated_digest: str) -> None:
    """Give a dataset recorded before its unrepeated digest was kept the one a run names."""
    if unrepeated_digest and not dataset.unrepeated_digest:
        Dataset.objects.filter(pk=dataset.pk).update(unrepeated_digest=unrepeated_digest)
        dataset.unrepeated_digest = unrepeated_digest


def dataset_cases_create(
    *,
    dataset_id: int,
    cases: Sequence[engine.CaseResult] | Sequence[engine.Row],
    first_position: int = 0,
    batch_size: int | None = None,
    new_dataset: bool = False,
) -> None:
    """Write a dataset's rows; a row it holds already is kept. `new_dataset`: the
    dataset was created in this transaction, so no row can collide."""
    either: Sequence[engine.CaseResult | engine.Row] = cases
    rows_insert(
        model=DatasetCase,
        columns=DATASET_CASE_COLUMNS,
        rows=(
            (dataset_id, case.id, position, case.input, case.expected, case.split, case.cluster)
            # A repeated id keeps its first row, as before.
            for position, case in numbered_first_of_each(either, CASE_ID, first_position)
        ),
        ignore_conflicts=not new_dataset,
        batch_size=_batch_size(batch_size),
    )


def dataset_record(data: engine.Dataset | engine.DatasetFile) -> Dataset:
    """The record of a loaded or checked dataset, its cases written the first time its
    digest is seen."""
    if isinstance(data, engine.DatasetFile):
        return _dataset_file_record(data)
    return dataset_get_or_create(
        digest=data.digest,
        source=data.source,
        splits=data.splits,
        cases=data.rows,
        unrepeated_digest=data.unrepeated_digest,
    )


def _dataset_file_record(data: engine.DatasetFile) -> Dataset:
    """The record of a checked dataset file; its rows, read from the file again, go to the
    database in batches as they are read the first time its digest is seen."""
    with transaction.atomic():
        dataset, created = Dataset.objects.get_or_create(
            digest=data.digest,
            defaults={
                "source": data.source[:1000],
                "n_cases": data.n_cases,
                "splits": data.splits,
                "unrepeated_digest": data.unrepeated_digest,
            },
        )
        if created:
            rows_insert(
                model=DatasetCase,
                columns=DATASET_CASE_COLUMNS,
                rows=(
                    (dataset.pk, row.id, position, row.input, row.expected, row.split, row.cluster)
                    # The file's ids were checked unique: no row is skipped.
                    for position, row in enumerate(data.rows())
                ),
                ignore_conflicts=False,
                batch_size=_batch_size(None),
            )
        _name_unrepeated(dataset, data.unrepeated_digest)
    return dataset


def dataset_of_result(result: engine.Result, *, batch_size: int | None = None) -> Dataset:
    """The dataset a finished run was over, with its rows written from the run's cases the
    first time its digest is seen."""
    info = result.provenance.get("dataset") or {}
    return dataset_get_or_create(
        digest=str(info.get("digest") or _cases_digest(result.cases)),
        source=str(info.get("source") or "<unknown>"),
        splits=_split_counts(result.cases),
        cases=result.cases,
        batch_size=batch_size,
        unrepeated_digest=str(info.get("unrepeated_digest") or ""),
    )


def dataset_unfilled(dataset: Dataset) -> bool:
    """Whether the dataset holds fewer rows than it has cases: it was opened by a run
    recorded as it goes that did not finish, and the next such run writes them."""
    return DatasetCase.objects.filter(dataset=dataset).count() < dataset.n_cases


def _split_counts(cases: Sequence[engine.CaseResult]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for case in cases:
        if case.split is not None:
            counts[case.split] = counts.get(case.split, 0) + 1
    return counts


def _cases_digest(cases: Sequence[engine.CaseResult]) -> str:
    hasher = hashlib.sha256()
    for case in cases:
        hasher.update(engine.canonical_json([case.id, case.input, case.expected]).encode())
    return hasher.hexdigest()
