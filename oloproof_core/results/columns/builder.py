"""Building a run's columns row by row: `CaseColumnsBuilder` in the run's order,
`ReadingOrderBuilder` in the statistics' reading order.

A builder keeps no row. In memory, each case costs its id and a few bytes per column;
spilled (`spill=True`, what a worker concluding a large run uses), each column goes to a
temporary file as the rows arrive and the process holds a block of each, whatever the
size of the run (`SpilledColumns`).
"""

from __future__ import annotations

from array import array
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, TypeAlias

from oloproof_core.cases.observations import ModelCall
from oloproof_core.cases.usage import RoleUsage
from oloproof_core.results.columns.case_columns import NONE, CaseColumns
from oloproof_core.results.columns.spill import Spill
from oloproof_core.results.columns.spilled import (
    ReadingColumns,
    SpilledColumns,
    SpilledFiles,
    code_column,
    float_column,
)

Column: TypeAlias = "array[float] | Spill"
Verdicts = Sequence[tuple[float | None, Mapping[str, Any] | None]]
"""A case's verdicts as (value, sub-scores) in the order of the criteria; (None, None)
where it has none."""

_NAN = float("nan")


class CaseColumnsBuilder:
    """Collects a run's cases row by row, in order, into `CaseColumns`.

    With `spill`, the columns go to temporary files and `build` is given the ids as the
    store keeps them (`DeferredIds`) and the reading-order columns (`ReadingOrderBuilder`):
    the result is `SpilledColumns`.
    """

    def __init__(self, criteria: Iterable[str], *, spill: bool = False) -> None:
        self._criteria = list(criteria)
        self._spill = spill
        self._count = 0
        self._ids: list[str] = []
        self._values = {criterion: self._column("d") for criterion in self._criteria}
        self._scores: dict[str, dict[str, Column]] = {c: {} for c in self._criteria}
        self._clusters = self._column("i")
        self._cluster_labels: dict[str, int] = {}
        self._errors = self._column("i")
        self._error_types: dict[str, int] = {}
        self._usage: dict[str, RoleUsage] = {}
        self._latency = self._column("d")
        self._cost = self._column("d")

    def _column(self, code: str, missing: int = 0) -> Column:
        """An empty column, or one missing on the `missing` cases before."""
        if self._spill:
            spilled = Spill(code)
            spilled.repeat(_NAN, missing)
            return spilled
        return array(code, [_NAN]) * missing if missing else array(code)

    def add(
        self,
        case_id: str,
        *,
        cluster: str | None,
        error_type: str | None,
        verdicts: Verdicts,
        model_calls: Sequence[Mapping[str, Any]] = (),
        latency_ms: float | None = None,
        cost_usd: float | None = None,
    ) -> None:
        """One case: its verdicts' (value, scores) in the order of the criteria given, and
        what the platform measured of its system call (None where nothing was)."""
        position = self._count
        self._count += 1
        if not self._spill:
            self._ids.append(case_id)
        self._latency.append(_NAN if latency_ms is None else float(latency_ms))
        self._cost.append(_NAN if cost_usd is None else float(cost_usd))
        labels, types = self._cluster_labels, self._error_types
        self._clusters.append(NONE if cluster is None else labels.setdefault(cluster, len(labels)))
        self._errors.append(types.setdefault(error_type, len(types)) if error_type else NONE)
        for criterion, (value, scores) in zip(self._criteria, verdicts, strict=True):
            self._values[criterion].append(_NAN if value is None else float(value))
            subs = self._scores[criterion]
            for name, score in (scores or {}).items():
                column = subs.get(name)
                if column is None:  # first seen here: missing on every earlier case
                    column = subs[name] = self._column("d", position)
                # A missing verdict's sub-scores are missing too, as `values_by_case` reads.
                missing = value is None or score is None
                column.append(_NAN if missing else float(score))
            for column in subs.values():
                if len(column) == position:
                    column.append(_NAN)
        for item in model_calls:
            call = ModelCall(**item)
            self._usage.setdefault(call.role, RoleUsage()).add(call)

    @property
    def count(self) -> int:
        """How many cases were added."""
        return self._count

    def sub_scores(self) -> dict[str, list[str]]:
        """Each criterion's sub-scores seen so far, in the order they were first seen."""
        return {criterion: list(subs) for criterion, subs in self._scores.items()}

    def build(
        self, ids: Sequence[str] | None = None, reading: ReadingColumns | None = None
    ) -> CaseColumns:
        """The columns; `ids` are the cases' ids when the builder did not keep them."""
        if (ids is None and self._spill) or (ids is not None and len(ids) != self._count):
            raise ValueError(f"build needs the ids of the {self._count} cases it was given")
        if self._spill:
            assert ids is not None
            return self._spilled(ids, reading)
        return CaseColumns(
            self._ids if ids is None else ids,
            {criterion: float_column(column) for criterion, column in self._values.items()},
            {
                c: {n: float_column(col) for n, col in subs.items()}
                for c, subs in self._scores.items()
            },
            cluster_codes=code_column(self._clusters),
            cluster_labels=list(self._cluster_labels),
            error_codes=code_column(self._errors),
            error_types=list(self._error_types),
            model_usage=self._usage,
            read_order=None if reading is None else reading.order(),
            latency=float_column(self._latency),
            cost=float_column(self._cost),
        )

    def _spilled(self, ids: Sequence[str], reading: ReadingColumns | None) -> CaseColumns:
        def spills(columns: Mapping[str, Column]) -> dict[str, Spill]:
            return {name: column for name, column in columns.items() if isinstance(column, Spill)}

        assert isinstance(self._clusters, Spill)
        assert isinstance(self._errors, Spill)
        assert isinstance(self._latency, Spill)
        assert isinstance(self._cost, Spill)
        files = SpilledFiles(
            values=spills(self._values),
            scores={criterion: spills(subs) for criterion, subs in self._scores.items()},
            clusters=self._clusters if self._cluster_labels else None,
            errors=self._errors,
            latency=self._latency,
            cost=self._cost,
        )
        return SpilledColumns(
            ids, files, reading, cluster_labels=list(self._cluster_labels),
            error_types=list(self._error_types), model_usage=self._usage,
        )  # fmt: skip


class ReadingOrderBuilder:
    """A run's score columns in the statistics' reading order, as a store reads them
    sorted by their ids' digests (`stats._order`): each row's place in the run, then its
    verdicts for `criteria`, whose own values are read when in `whole` and whose
    `sub_scores` are read all.
    """

    def __init__(
        self,
        criteria: Sequence[str],
        *,
        whole: Iterable[str],
        sub_scores: Mapping[str, Sequence[str]],
    ) -> None:
        self._criteria = list(criteria)
        self._whole = frozenset(whole)
        self._sub_scores = {c: list(sub_scores.get(c, ())) for c in self._criteria}
        names = [c for c in self._criteria if c in self._whole]
        names += [f"{c}.{name}" for c in self._criteria for name in self._sub_scores[c]]
        self._columns = ReadingColumns(Spill("i"), {name: Spill("d") for name in names})

    def add(self, position: int, verdicts: Verdicts) -> None:
        """The case at `position` in the run, the next in reading order."""
        columns = self._columns.values
        self._columns.positions.append(position)
        for criterion, (value, scores) in zip(self._criteria, verdicts, strict=True):
            if criterion in self._whole:
                columns[criterion].append(_NAN if value is None else float(value))
            for name in self._sub_scores[criterion]:
                score = None if value is None or scores is None else scores.get(name)
                columns[f"{criterion}.{name}"].append(_NAN if score is None else float(score))

    def build(self) -> ReadingColumns:
        return self._columns
