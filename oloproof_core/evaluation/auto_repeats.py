"""`repeats: auto`: more tries for the cases whose outcome is uncertain, one for the rest.

Which cases are uncertain is read from earlier runs of the same cases by the same
system (a store's `earlier_tries`), never from this run's own tries. A plan that stops
a case's tries once they agree leaves one unbiased reading of its rate, the mean of
the tries it always makes (docs/repeats.md, "Why the allocation comes from earlier
runs"), so the further tries would buy nothing. With the allocation fixed before the
first call, each case's mean over its own tries reads its rate without bias, and the
release figure, the mean over cases of those means, keeps its finite-sample interval
(`case_weighted.py`, each case weighed once).

A case tried at least twice in those runs, always with the same outcome, is tried
once; every other case (flaky there, tried once, or new) `AUTO_MOST` times. While
flakiness persists between releases, the flaky cases are measured as five repeats
measure them and each stable case costs one call; a stable case that changes shows it
in its one try, and is tried `AUTO_MOST` times by the next run.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from oloproof_core._util.canonical import digest_text
from oloproof_core.datasets.file import DatasetFile
from oloproof_core.datasets.rows import Dataset, Row
from oloproof_core.evaluation.repeats import case_id_of, repeat_row, repeats_in, unrepeated_digest

if TYPE_CHECKING:
    from oloproof_core.results.result import Result

AUTO_MOST = 5
"""Tries for a case whose outcome is uncertain: the uniform count whose width auto meets."""
EVIDENCE_RUNS = 10
"""Earlier runs read for the allocation, newest first. A flaky case whose tries happen to
agree is tried once, and is caught when a later try differs: the longer the window, the
longer a disagreement is remembered. With three runs, five tries of every case were
still 0.6 % and 2.4 % narrower after thirty runs on the benchmark's populations; with
ten, 0.05 % and 0.5 % (bench/README.md, "`repeats: auto` run after run")."""

EarlierTries = Mapping[str, Sequence[str]]
"""Each case's outcomes in earlier runs, one string per try (`try_outcomes`)."""


def try_outcomes(result: Result) -> dict[str, list[str]]:
    """Each case's tries in `result`, one outcome a try: every metric's value, as text.

    A try with a metric that has no value (the system or the judge failed) says nothing
    of the case's outcome and is left out."""
    criteria = sorted({name for case in result.cases for name in case.verdicts})
    values = [
        [case.verdicts[name].value if name in case.verdicts else None for case in result.cases]
        for name in criteria
    ]
    ids = [case.id for case in result.cases]
    return column_outcomes(ids, values, repeated=repeats_in(result.provenance) > 1)


def column_outcomes(
    ids: Sequence[str], columns: Sequence[Any], *, repeated: bool
) -> dict[str, list[str]]:
    """`try_outcomes` of a run read as columns: the tries' ids, and each criterion's
    values in their order (None or NaN: no value), criteria in a fixed order.

    Per case, not per try: a case whose tries agree gets its outcome once for each try,
    one whose tries disagree two different outcomes, which is all `allocate` reads."""
    import numpy as np

    if not columns or not ids:
        return {}
    values = np.asarray(columns, dtype=np.float64).reshape(len(columns), len(ids))
    valid = ~np.isnan(values).any(axis=0)
    names = [case_id_of(try_id) if repeated else try_id for try_id in ids]
    index: dict[str, int] = {}
    codes = np.fromiter((index.setdefault(name, len(index)) for name in names), np.intp)
    codes, values = codes[valid], values[:, valid]
    counts = np.bincount(codes, minlength=len(index))
    low = np.full((len(columns), len(index)), np.inf)
    high = np.full((len(columns), len(index)), -np.inf)
    for row in range(len(columns)):
        np.minimum.at(low[row], codes, values[row])
        np.maximum.at(high[row], codes, values[row])
    agree = (low == high).all(axis=0)
    found: dict[str, list[str]] = {}
    for case_id, code in index.items():
        if counts[code]:
            outcome = json.dumps(low[:, code].tolist())
            other = outcome if agree[code] else json.dumps(high[:, code].tolist())
            found[case_id] = [outcome] * (int(counts[code]) - 1) + [other]
    return found


def merged_tries(runs: Iterable[Mapping[str, Sequence[str]]]) -> dict[str, list[str]]:
    merged: dict[str, list[str]] = {}
    for tries in runs:
        for case_id, outcomes in tries.items():
            merged.setdefault(case_id, []).extend(outcomes)
    return merged


def allocate(case_ids: Iterable[str], earlier: EarlierTries) -> dict[str, int]:
    """How many times each case runs: once when its earlier tries, two or more, agreed."""
    return {case_id: 1 if _stable(earlier.get(case_id, ())) else AUTO_MOST for case_id in case_ids}


def _stable(outcomes: Sequence[str]) -> bool:
    return len(outcomes) >= 2 and len(set(outcomes)) == 1


def tried_rows(rows: Iterable[Row], tries: Mapping[str, int]) -> Iterator[Row]:
    """Each row as many times as `tries` gives its case, as the repeats `<id>#r1` …"""
    for row in rows:
        for j in range(1, tries[row.id] + 1):
            yield repeat_row(row, j)


def tried_digest(digest: str, tries: Mapping[str, int]) -> str:
    allocation = json.dumps(sorted(tries.items()), separators=(",", ":"))
    return digest_text(f"{digest}|repeats=auto|{digest_text(allocation)}")


def tried_dataset(data: Dataset, tries: Mapping[str, int]) -> Dataset:
    """`data` with each case as many times as `tries` says, under a digest of its own
    that names the allocation (and `unrepeated_digest` the file's)."""
    return Dataset(
        source=data.source,
        rows=list(tried_rows(data.rows, tries)),
        digest=tried_digest(data.digest, tries),
        split=data.split,
        splits=dict(data.splits),  # counted in cases: their tries differ
        unrepeated_digest=data.digest,
    )


@dataclass(frozen=True, slots=True)
class TriedDatasetFile(DatasetFile):
    """A checked dataset file whose rows are read as `tried_rows` reads them: what a run
    with `repeats: auto` queued for the workers records, under `tried_digest`."""

    file: DatasetFile | None = None
    tries: Mapping[str, int] = field(default_factory=dict)

    def rows(self) -> Iterator[Row]:
        assert self.file is not None, "made by allocated_dataset_file"
        return tried_rows(self.file.rows(), self.tries)


def allocated_dataset_file(data: DatasetFile, earlier: Earlier) -> DatasetFile:
    """`data` read with each case as many times as `allocate` gives it from `earlier`."""
    tries = allocate((row.id for row in data.rows()), earlier.tries)
    return TriedDatasetFile(
        source=data.source,
        digest=tried_digest(data.digest, tries),
        n_cases=sum(tries.values()),
        split=data.split,
        splits=dict(data.splits),
        unrepeated_digest=data.digest,
        file=data,
        tries=tries,
    )


def tries_of(ids: Iterable[str]) -> dict[str, int]:
    """How many tries each case has among a run's ids (`<case id>#r<j>`)."""
    counts: dict[str, int] = {}
    for repeat_id in ids:
        case_id = case_id_of(repeat_id)
        counts[case_id] = counts.get(case_id, 0) + 1
    return counts


def allocation_figures(tries: Mapping[str, int], evidence_runs: int) -> dict[str, Any]:
    """What a run's provenance says of its allocation (`provenance["repeats"]["auto"]`)."""
    most = sum(1 for count in tries.values() if count == AUTO_MOST)
    return {
        "most": AUTO_MOST,
        "evidence_runs": evidence_runs,
        "cases_once": len(tries) - most,
        "cases_most": most,
        "calls": sum(tries.values()),
        "uniform_calls": AUTO_MOST * len(tries),
    }


def of_dataset(provenance: Mapping[str, Any], cases_digest: str, source: str) -> bool:
    """Whether a run, by its provenance, ran the dataset of `cases_digest` (at any repeat
    count) or the file at `source` as it was then: its cases are matched by id, so a case
    added since runs `AUTO_MOST` times, and one edited since is read by its old tries,
    which sets how often it runs, never its figure."""
    if unrepeated_digest(provenance) == cases_digest:
        return True
    return is_file_source(source) and (provenance.get("dataset") or {}).get("source") == source


def is_file_source(source: str) -> bool:
    """Rows given in code have a source of their own (`<rows>`), not a file's path."""
    return bool(source) and not source.startswith("<")


def allocated_dataset(
    data: Dataset, store: object, system_name: str
) -> tuple[Dataset, dict[str, int], int]:
    """`data` with each case as many times as the store's earlier runs of the same cases
    by this system say, each case's tries, and how many runs were read; every case
    `AUTO_MOST` times when the store knows of none (or keeps no runs)."""
    read = getattr(store, "earlier_tries", None)
    found = None if read is None else read(data.digest, system_name, data.source)
    earlier: Earlier = Earlier(0, {}) if found is None else found
    tries = allocate((row.id for row in data.rows), earlier.tries)
    return tried_dataset(data, tries), tries, earlier.runs


@dataclass(frozen=True, slots=True)
class Earlier:
    """What a store read of earlier runs of the same cases: how many, and their tries."""

    runs: int
    tries: dict[str, list[str]]


def earlier_from(results: Iterable[Result]) -> Earlier:
    """The `Earlier` of recorded runs given newest first (at most `EVIDENCE_RUNS` read)."""
    return earlier_of(
        [try_outcomes(result) for _, result in zip(range(EVIDENCE_RUNS), results, strict=False)]
    )


def earlier_of(runs: Sequence[Mapping[str, list[str]]]) -> Earlier:
    """The `Earlier` of runs' tries already read (`column_outcomes`), newest first."""
    return Earlier(runs=len(runs), tries=merged_tries(runs))
