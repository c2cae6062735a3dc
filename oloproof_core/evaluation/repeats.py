"""Repeats: each case of a dataset run k times, as k independent calls of the system.

A release that answers differently each time is measured by running every case
several times. Each repeat is a case of its own (`<id>#r<j>`, `repeat` j), so every
stage of a run (execution, judging, recording) treats it as it treats any case; the
repeats of one case share a cluster, so the statistics take the case as the unit
(betting on cluster means, `stats._cluster_betting`). A dataset that has clusters of
its own keeps them: a case's repeats lie in its cluster, which stays the unit.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from oloproof_core._util.canonical import digest_text
from oloproof_core.datasets.file import DatasetFile
from oloproof_core.datasets.rows import Dataset, Row
from oloproof_core.errors import ConfigError

MAX_REPEATS = 100
"""The most repeats a run may ask for: beyond it a run is better served by more cases,
and a typo (`repeats: 1000`) would otherwise multiply a run's cost unnoticed."""

MAX_JUDGE_REPEATS = 100
"""The most times a model judge may judge each output: a typo (`judge_repeats: 1000`)
would otherwise multiply the judge's cost unnoticed."""

AUTO = "auto"
"""`repeats: auto`: more runs for the cases earlier runs found flaky (`auto_repeats.py`)."""

AUTO_SEQUENTIAL = (
    "repeats: auto is not available with a run that stops when decided (--until-decided, "
    "or a policy's sequential:), which reads its batches as they come: give repeats a "
    "number of runs per case"
)

REPEAT_MARK = "#r"
"""Joins a case's id and its repeat index into the repeat's id: `q17#r2`."""


def is_auto(repeats: object) -> bool:
    return isinstance(repeats, str) and repeats.strip().lower() == AUTO


def check_repeats(value: object) -> int | str:
    """`value` as a number of repeats: a whole number from 1 to `MAX_REPEATS`, or "auto"
    (`auto_repeats.py`)."""
    if is_auto(value):
        return AUTO
    if isinstance(value, bool) or not isinstance(value, int):
        raise ConfigError(
            f"repeats must be a whole number of runs per case (1 to {MAX_REPEATS}) or "
            f"'auto' (more runs for the cases that were flaky before), got {value!r}"
        )
    if not 1 <= value <= MAX_REPEATS:
        raise ConfigError(f"repeats must be between 1 and {MAX_REPEATS}, got {value}")
    return value


def counted_repeats(value: object, label: str = "repeats") -> int:
    """`check_repeats` for what runs every case the same number of times: an
    optimization, whose candidates are new each time, has no earlier runs for auto."""
    checked = check_repeats(value)
    if isinstance(checked, str):
        raise ConfigError(
            f"{label}: repeats: auto reads earlier runs of a release's cases and is not "
            "available to an optimization, whose candidates are new each time: give a "
            "number of repeats, e.g. repeats: 3"
        )
    return checked


def check_judge_repeats(value: object) -> int:
    """`value` as a number of verdicts per output: a whole number from 1 to the most."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise ConfigError(
            "judge_repeats must be a whole number of times a model judge judges each output "
            f"(1 to {MAX_JUDGE_REPEATS}), got {value!r}"
        )
    if not 1 <= value <= MAX_JUDGE_REPEATS:
        raise ConfigError(f"judge_repeats must be between 1 and {MAX_JUDGE_REPEATS}, got {value}")
    return value


def repeat_id(case_id: str, repeat: int) -> str:
    return f"{case_id}{REPEAT_MARK}{repeat}"


def case_id_of(repeat_case_id: str) -> str:
    """The case a repeat belongs to: its id without the last `#r<j>`, which makes every
    repeat's id distinct from every other's, whatever the dataset's ids hold."""
    return repeat_case_id.rpartition(REPEAT_MARK)[0] or repeat_case_id


def repeat_of(repeat_case_id: str) -> int:
    """The repeat index a repeat's id ends in (`q17#r2`: 2); 0 for an id without one."""
    _, mark, index = repeat_case_id.rpartition(REPEAT_MARK)
    return int(index) if mark and index.isdigit() else 0


def repeated_rows(rows: Iterable[Row], repeats: int) -> Iterator[Row]:
    """Each row `repeats` times in a row, as the repeats `<id>#r1` … `<id>#r<k>`."""
    for row in rows:
        for j in range(1, repeats + 1):
            yield repeat_row(row, j)


def with_repeat_index(rows: Sequence[Row]) -> list[Row]:
    """Rows read back from a store that keeps a repeat's id but not its index (the workers'
    dataset rows): each given the index its id ends in, which the verdict cache keys on."""
    for row in rows:
        row.repeat = repeat_of(row.id)
    return list(rows)


def repeated_digest(digest: str, repeats: int) -> str:
    return digest_text(f"{digest}|repeats={repeats}")


def repeats_in(provenance: Mapping[str, Any]) -> int:
    """How many times a run, by its provenance, ran each case (1 without repeats); with
    `repeats: auto`, the most it ran a case."""
    figures = provenance.get("repeats")
    count = figures.get("repeats") if isinstance(figures, Mapping) else None
    return count if isinstance(count, int) and count > 1 else 1


def tries_vary(provenance: Mapping[str, Any]) -> bool:
    """Whether a run, by its provenance, ran some cases more times than others (auto)."""
    figures = provenance.get("repeats")
    return isinstance(figures, Mapping) and isinstance(figures.get("auto"), Mapping)


def unrepeated_digest(provenance: Mapping[str, Any]) -> str:
    """The digest of the dataset a run repeated, or ran once ("" when not recorded)."""
    info = provenance.get("dataset") or {}
    key = "unrepeated_digest" if repeats_in(provenance) > 1 else "digest"
    return str(info.get(key) or "")


def different_cases(first: Mapping[str, Any], second: Mapping[str, Any]) -> str:
    """Why two runs, by their provenances, were not over the same cases; "" when they were:
    one dataset (by content digest), run at the same or at different repeat counts.

    A run that does not name its dataset's digest is taken at its word ("")."""
    digests = [str((p.get("dataset") or {}).get("digest") or "") for p in (first, second)]
    if not all(digests) or digests[0] == digests[1]:
        return ""
    counts = [repeats_in(provenance) for provenance in (first, second)]
    unrepeated = [unrepeated_digest(provenance) for provenance in (first, second)]
    differ = counts[0] != counts[1] or tries_vary(first) or tries_vary(second)
    if differ and all(unrepeated) and unrepeated[0] == unrepeated[1]:
        return ""
    if counts[0] != counts[1] and not all(unrepeated):
        return (
            f"the runs repeated each case a different number of times ({counts[0]} and "
            f"{counts[1]}), and a run recorded by an earlier oloproof does not name the "
            "dataset it repeated, so the cases cannot be matched; run it again (docs/repeats.md)"
        )
    shown = [(unrepeated[i] or digests[i])[:12] for i in (0, 1)]
    return (
        f"the runs were evaluated on different datasets (digest {shown[0]} and "
        f"{shown[1]}); a paired comparison needs the same cases: compare runs "
        "of one dataset"
    )


def repeated_dataset(data: Dataset, repeats: int) -> Dataset:
    """`data` with each row `repeats` times in a row, the dataset itself when once.

    Its digest is the file's and the repeat count's: the store records these rows as a
    dataset of their own, never under the file's digest, where a run without repeats
    would find them."""
    if repeats == 1:
        return data
    rows = list(repeated_rows(data.rows, repeats))
    splits = {name: count * repeats for name, count in data.splits.items()}
    digest = repeated_digest(data.digest, repeats)
    return Dataset(
        source=data.source,
        rows=rows,
        digest=digest,
        split=data.split,
        splits=splits,
        unrepeated_digest=data.digest,
    )


@dataclass(frozen=True, slots=True)
class RepeatedDatasetFile(DatasetFile):
    """A checked dataset file whose rows are read as their repeats (`repeated_rows`): what
    a run queued for the workers records, under the digest `repeated_dataset` gives."""

    file: DatasetFile | None = None
    repeats: int = 1

    def rows(self) -> Iterator[Row]:
        assert self.file is not None, "made by repeated_dataset_file"
        return repeated_rows(self.file.rows(), self.repeats)


def repeated_dataset_file(data: DatasetFile, repeats: int) -> DatasetFile:
    """`data` read as `repeated_dataset` reads a loaded dataset; the file itself when once."""
    if repeats == 1:
        return data
    return RepeatedDatasetFile(
        source=data.source,
        digest=repeated_digest(data.digest, repeats),
        n_cases=data.n_cases * repeats,
        split=data.split,
        splits={name: count * repeats for name, count in data.splits.items()},
        unrepeated_digest=data.digest,
        file=data,
        repeats=repeats,
    )


def repeat_row(row: Row, repeat: int) -> Row:
    return Row(
        id=repeat_id(row.id, repeat),
        input=row.input,
        expected=row.expected,
        split=row.split,
        cluster=row.cluster if row.cluster is not None else row.id,
        input_digest=row.input_digest,
        expected_digest=row.expected_digest,
        repeat=repeat,
        refused=row.refused,
    )
