"""A run's cases as narrow columns: what its conclusion reads, and nothing else.

Concluding a run reads, per case, its id, its cluster, whether the system failed, each
criterion's value and each sub-score, and its model calls only as sums by role. A
run of a million cases held as `CaseResult` objects (inputs, outputs, verdicts with
their feedback) needs gigabytes; held as these columns it needs the ids and eight
bytes per case and metric. `CaseColumns` is a sequence of cases too, so every reader
of `Result.cases` still works: a case asked for is made on the spot from its columns
(id, cluster, error type, verdict values and scores), never kept. The readers a
conclusion goes through (`aggregate`, `values_by_case`, `column_lists`, the gate's
missing-cases rule, `Result.usage`) read the columns directly instead.

A store that keeps the run's ids itself passes them as `DeferredIds`, read only if a
reader asks for an id (a comparison by case, clusters, a sequential look); a worker
concluding a large run keeps the columns themselves in files (`SpilledColumns`).
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, overload

from oloproof_core.cases.case import CaseError, CaseResult
from oloproof_core.cases.usage import RoleUsage
from oloproof_core.cases.verdict import Verdict

if TYPE_CHECKING:  # NumPy loads when columns are built: `Result` checks for them cheaply
    import numpy as np
    import numpy.typing as npt

    from oloproof_core.results.estimate import MetricEstimate
    from oloproof_core.stats import ReadOrder

    FloatArray = npt.NDArray[np.float64]
    CodeArray = npt.NDArray[np.int32]
    BoolArray = npt.NDArray[np.bool_]

NONE = -1
"""The code of a case without a cluster, or without an error."""


class DeferredIds(Sequence[str]):
    """A run's case ids in its order, read from their store only when first asked for."""

    __slots__ = ("_ids", "_length", "_read")

    def __init__(self, read: Callable[[], list[str]], length: int) -> None:
        self._read = read
        self._length = length
        self._ids: list[str] | None = None

    @property
    def loaded(self) -> bool:
        return self._ids is not None

    def _loaded(self) -> list[str]:
        if self._ids is None:
            ids = self._read()
            if len(ids) != self._length:
                raise RuntimeError(f"the store holds {len(ids)} case ids for {self._length} cases")
            self._ids = ids
        return self._ids

    def __len__(self) -> int:
        return self._length

    @overload
    def __getitem__(self, index: int) -> str: ...

    @overload
    def __getitem__(self, index: slice) -> list[str]: ...

    def __getitem__(self, index: int | slice) -> str | list[str]:
        return self._loaded()[index]

    def __iter__(self) -> Iterator[str]:
        return iter(self._loaded())


@dataclass(frozen=True, slots=True)
class MeasuredColumns:
    """What the latency and cost figures read of each case: the wall time of its system
    call (ms) and its system's model cost (US dollars), each NaN where not measured, and
    whether its system failed (a failed case has no reply, so no reply time)."""

    latency: FloatArray
    cost: FloatArray
    failed: BoolArray


class CaseColumns(Sequence[CaseResult]):
    """A run's cases in order, column by column (see the module's docstring).

    `values[criterion]` and `scores[criterion][name]` hold one float per case, NaN
    where missing (a sub-score is missing wherever its verdict is); `cluster_codes`
    index `cluster_labels` and `error_codes` index `error_types`, `NONE` for none.
    `latency` and `cost` are the platform's measurements, None when the columns were
    made without them (a result file's value columns keep none).
    """

    __slots__ = (
        "cluster_codes",
        "cluster_labels",
        "cost",
        "error_codes",
        "error_types",
        "ids",
        "latency",
        "model_usage",
        "read_order",
        "scores",
        "values",
    )

    def __init__(
        self,
        ids: Sequence[str],
        values: dict[str, FloatArray],
        scores: dict[str, dict[str, FloatArray]],
        *,
        cluster_codes: CodeArray | None = None,
        cluster_labels: Sequence[str] = (),
        error_codes: CodeArray | None = None,
        error_types: Sequence[str] = (),
        model_usage: dict[str, RoleUsage] | None = None,
        read_order: ReadOrder | None = None,
        latency: FloatArray | None = None,
        cost: FloatArray | None = None,
    ) -> None:
        self.ids = ids
        self.latency = latency
        self.cost = cost
        self.read_order = read_order
        self.values = values
        self.scores = scores
        self.cluster_codes = cluster_codes
        self.cluster_labels = list(cluster_labels)
        self.error_codes = error_codes
        self.error_types = list(error_types)
        self.model_usage = model_usage or {}

    def __len__(self) -> int:
        return len(self.ids)

    @overload
    def __getitem__(self, index: int) -> CaseResult: ...

    @overload
    def __getitem__(self, index: slice) -> list[CaseResult]: ...

    def __getitem__(self, index: int | slice) -> CaseResult | list[CaseResult]:
        if isinstance(index, slice):
            return [self._case(i) for i in range(*index.indices(len(self)))]
        if index < 0:
            index += len(self)
        if not 0 <= index < len(self):
            raise IndexError("case index out of range")
        return self._case(index)

    def __iter__(self) -> Iterator[CaseResult]:
        return (self._case(i) for i in range(len(self)))

    def _case(self, i: int) -> CaseResult:
        """Case `i` as far as the columns know it: no input, output or feedback."""
        verdicts = {}
        for criterion, column in self.values.items():
            value = float(column[i])
            if value != value:
                verdicts[criterion] = Verdict(value=None, error="missing")
                continue
            scores = {
                name: float(sub[i])
                for name, sub in self.scores.get(criterion, {}).items()
                if sub[i] == sub[i]
            }
            verdicts[criterion] = Verdict(value=value, scores=scores)
        error = None
        if self.error_codes is not None and self.error_codes[i] != NONE:
            error = CaseError(self.error_types[int(self.error_codes[i])], "")
        return CaseResult(
            id=self.ids[i], input={}, expected=None, cluster=self.cluster(i), error=error,
            verdicts=verdicts,
        )  # fmt: skip

    def cluster(self, i: int) -> str | None:
        if self.cluster_codes is None or self.cluster_codes[i] == NONE:
            return None
        return self.cluster_labels[int(self.cluster_codes[i])]

    def cluster_keys(self) -> list[str] | None:
        """Each case's cluster, an unclustered case standing alone; None if none has one
        (as `aggregate.case_clusters` reads `CaseResult`s)."""
        codes = self.cluster_codes
        if codes is None or not (codes != NONE).any():
            return None
        labels = self.cluster_labels
        return [
            labels[code] if code != NONE else f"\0{case_id}"
            for code, case_id in zip(codes.tolist(), self.ids, strict=True)
        ]

    def order_keys(self) -> Sequence[str] | ReadOrder:
        """What fixes the statistics' reading order: the order worked out when the columns
        were built, or the ids themselves."""
        return self.ids if self.read_order is None else self.read_order

    def keeps_measurements(self) -> bool:
        """Whether the columns hold each case's latency and cost."""
        return self.latency is not None and self.cost is not None

    def measured_columns(self) -> MeasuredColumns | None:
        """Each case's latency, cost and failure; None when no case has a latency."""
        import numpy as np

        if self.latency is None or self.cost is None or np.isnan(self.latency).all():
            return None
        failed = np.zeros(len(self), dtype=bool)
        if self.error_codes is not None:
            failed = self.error_codes != NONE
        return MeasuredColumns(self.latency, self.cost, failed)

    def sub_score_names(self, criterion: str) -> list[str]:
        """A criterion's sub-scores, in the order they were first seen."""
        return list(self.scores.get(criterion, {}))

    def metric_values(self, criterion: str, sub_score: str | None = None) -> FloatArray:
        """A criterion's values (or one of its sub-scores'), NaN where missing."""
        if sub_score is None:
            return self.values.get(criterion, self._nothing())
        return self.scores.get(criterion, {}).get(sub_score, self._nothing())

    def metric_column(self, metric: MetricEstimate) -> FloatArray:
        """A metric's values (a criterion's, or its sub-score's), NaN where missing."""
        sub_score = metric.metric[len(metric.criterion) + 1 :] if metric.is_sub_score else None
        return self.metric_values(metric.criterion, sub_score)

    def _nothing(self) -> FloatArray:
        import numpy as np

        return np.full(len(self), np.nan)

    def missing_anything(self) -> int:
        """How many cases the system failed on or have a missing verdict."""
        import numpy as np

        missing = np.zeros(len(self), dtype=bool)
        if self.error_codes is not None:
            missing |= self.error_codes != NONE
        for column in self.values.values():
            missing |= np.isnan(column)
        return int(missing.sum())

    def nbytes(self) -> int:
        """Roughly what the columns hold in memory: ids, their list, the arrays."""
        arrays: list[Any] = [*self.values.values()]
        arrays += [column for subs in self.scores.values() for column in subs.values()]
        arrays += [a for a in (self.cluster_codes, self.error_codes) if a is not None]
        arrays += [a for a in (self.latency, self.cost) if a is not None]
        if self.read_order is not None:
            arrays.append(self.read_order.indices)
        ids = 0
        if not isinstance(self.ids, DeferredIds) or self.ids.loaded:
            ids = sum(map(sys.getsizeof, self.ids)) + sys.getsizeof(self.ids)
        return ids + int(sum(column.nbytes for column in arrays))


def listed(column: FloatArray) -> list[float | None]:
    """A column as the values `estimate_metric` reads, None where missing."""
    return [None if value != value else value for value in column.tolist()]
