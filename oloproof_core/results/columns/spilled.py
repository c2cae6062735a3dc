"""A run's columns kept in temporary files: a conclusion whose memory does not grow with
the run.

`CaseColumns` holds 8 bytes a case and metric, the reading order and the error codes:
at a million cases and two metrics, some 30 MB, and more for every temporary an
interval's search makes. `SpilledColumns` keeps each column in a file (`Spill`), in the
run's order, and each score metric once more in the statistics' reading order, as the
store read the cases sorted by their ids' digests. What a plain run's conclusion reads
goes through the files a block at a time:

- a pass/fail metric's counts and a score metric's sum (`metric_figures`);
- a score metric's interval (`stats.spilled_mean_interval`, from the reading-order file);
- the cases missing anything, for the gate's missing-cases rule (`missing_anything`);
- the value columns the store keeps for comparisons (`value_parts`, `read_order_parts`).

Anything else (clusters, a baseline, a sequential look, a readout) reads the columns
whole: the first attribute asked for loads them all into memory, as `CaseColumns`
holds them, and every reader of `CaseColumns` works unchanged.
"""

from __future__ import annotations

from array import array
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from oloproof_core.cases.usage import RoleUsage
from oloproof_core.results.columns import spill
from oloproof_core.results.columns.case_columns import NONE, CaseColumns, MeasuredColumns
from oloproof_core.results.columns.spill import ExactSum, Spill

if TYPE_CHECKING:
    from oloproof_core.results.columns.case_columns import CodeArray, FloatArray
    from oloproof_core.stats import ReadOrder

_LOADED_ON_DEMAND = frozenset(
    {"values", "scores", "cluster_codes", "error_codes", "read_order", "latency", "cost"}
)


@dataclass(frozen=True, slots=True)
class SpilledFiles:
    """The run's columns in its order: values, sub-scores, cluster and error codes, and
    the measured latency and cost (None where the store kept none)."""

    values: dict[str, Spill]
    scores: dict[str, dict[str, Spill]]
    clusters: Spill | None
    errors: Spill
    latency: Spill | None = None
    cost: Spill | None = None


@dataclass(frozen=True, slots=True)
class ReadingColumns:
    """Score metrics' values in reading order, with each one's place in the run."""

    positions: Spill
    values: dict[str, Spill]

    def order(self) -> ReadOrder:
        import numpy as np

        from oloproof_core.stats import ReadOrder

        return ReadOrder(np.asarray(self.positions.whole(), dtype=np.intp))


@dataclass(frozen=True, slots=True)
class MetricFigures:
    """What a metric's estimate needs of its column: counts and the exact sum."""

    n_observed: int
    n_missing: int
    successes: int
    total: float


class SpilledColumns(CaseColumns):
    """`CaseColumns` whose columns stay in files (see the module's docstring)."""

    __slots__ = ("_files", "_loaded", "_reading")

    def __init__(
        self,
        ids: Sequence[str],
        files: SpilledFiles,
        reading: ReadingColumns | None,
        *,
        cluster_labels: Sequence[str],
        error_types: Sequence[str],
        model_usage: dict[str, RoleUsage],
    ) -> None:
        # The columns' attributes stay unset until a reader asks (`__getattr__`).
        self.ids = ids
        self.cluster_labels = list(cluster_labels)
        self.error_types = list(error_types)
        self.model_usage = model_usage
        self._files = files
        self._reading = reading
        self._loaded = False
        if files.clusters is None:
            self.cluster_codes = None

    def __getattr__(self, name: str) -> Any:
        # Only reached for an attribute not set yet: a column a reader needs whole.
        if name not in _LOADED_ON_DEMAND:
            raise AttributeError(name)
        self._load()
        return object.__getattribute__(self, name)

    def _load(self) -> None:
        files = self._files
        self.values = {name: float_column(spill) for name, spill in files.values.items()}
        self.scores = {
            c: {name: float_column(spill) for name, spill in subs.items()}
            for c, subs in files.scores.items()
        }
        self.cluster_codes = None if files.clusters is None else code_column(files.clusters)
        self.error_codes = code_column(files.errors)
        self.read_order = None if self._reading is None else self._reading.order()
        self.latency = None if files.latency is None else float_column(files.latency)
        self.cost = None if files.cost is None else float_column(files.cost)
        self._loaded = True

    @property
    def clustered(self) -> bool:
        return self._files.clusters is not None

    def column_file(self, metric: str) -> Spill | None:
        """A metric's column in the run's order: a criterion's, or `criterion.sub_score`'s."""
        if metric in self._files.values:
            return self._files.values[metric]
        for criterion, subs in self._files.scores.items():
            if metric.startswith(f"{criterion}.") and metric[len(criterion) + 1 :] in subs:
                return subs[metric[len(criterion) + 1 :]]
        return None

    def sub_score_names(self, criterion: str) -> list[str]:
        return list(self._files.scores.get(criterion, {}))

    def metric_values(self, criterion: str, sub_score: str | None = None) -> FloatArray:
        # One column from its file: the others stay there.
        if self._loaded:
            return super().metric_values(criterion, sub_score)
        column = self.column_file(criterion if sub_score is None else f"{criterion}.{sub_score}")
        return self._nothing() if column is None else float_column(column)

    def order_keys(self) -> Sequence[str] | ReadOrder:
        return self.ids if self._reading is None else self._reading.order()

    def keeps_measurements(self) -> bool:
        return self._files.latency is not None and self._files.cost is not None

    def measured_columns(self) -> MeasuredColumns | None:
        import numpy as np

        files = self._files
        if files.latency is None or files.cost is None:
            return None
        # Looked at a block at a time first: a run without latencies loads nothing.
        if all(np.isnan(block).all() for block in files.latency.blocks()):
            return None
        failed = np.asarray(files.errors.whole(), dtype=np.intc) != NONE
        return MeasuredColumns(float_column(files.latency), float_column(files.cost), failed)

    def reading_file(self, metric: str) -> Spill | None:
        """A score metric's column in reading order, None if the store did not read it so."""
        return None if self._reading is None else self._reading.values.get(metric)

    def metric_figures(
        self, metric: str, score_range: tuple[float, float] | None = None
    ) -> MetricFigures:
        """Counts of a metric's observed values and successes; for a score metric (its
        `score_range` given) each value checked to lie in it, the error naming the case
        by its place in the run, and their exact sum (`total`, 0 for pass/fail)."""
        import numpy as np

        from oloproof_core.stats import check_case_scores

        column = self.column_file(metric)
        observed = successes = 0
        total = ExactSum()
        for start, block in _numbered(column):
            values = block[~np.isnan(block)]
            observed += int(values.size)
            successes += int((values >= 1.0).sum())
            if score_range is not None:
                check_case_scores(block, *score_range, first_case=start)
                total.add(values.tolist())
        n_missing = len(self) - observed
        return MetricFigures(observed, n_missing, successes, total.value)

    def missing_anything(self) -> int:
        import numpy as np

        columns = [self._files.errors.blocks(), *(v.blocks() for v in self._files.values.values())]
        missing = 0
        for errors, *values in zip(*columns, strict=True):
            found = errors != NONE
            for block in values:
                found |= np.isnan(block)
            missing += int(found.sum())
        return missing

    def cluster_keys(self) -> list[str] | None:
        return None if self._files.clusters is None else super().cluster_keys()

    def nbytes(self) -> int:
        """What the columns hold in memory: nothing per case until they are loaded."""
        return super().nbytes() if self._loaded else 0

    def value_parts(self, metrics: Sequence[str]) -> tuple[int, Iterator[bytes]]:
        """The value columns' bytes for `metrics` (little-endian float64, one column after
        another, NaN missing), in parts: their total length and the parts."""
        import numpy as np

        columns = [self.column_file(metric) for metric in metrics]
        block = spill.SPILL_BLOCK
        nothing = np.full(min(len(self), block), np.nan).astype("<f8").tobytes()

        def parts() -> Iterator[bytes]:
            for column in columns:
                if column is not None:
                    yield from column.byte_parts()
                    continue
                for start in range(0, len(self), block):  # a metric with no column
                    yield nothing[: 8 * min(block, len(self) - start)]

        return 8 * len(self) * len(columns), parts()

    def read_order_parts(self) -> tuple[int, Iterator[bytes]] | None:
        """The reading order's bytes (little-endian int32 places), None if not kept."""
        if self._reading is None:
            return None
        return self._reading.positions.nbytes, self._reading.positions.byte_parts()


def _numbered(column: Spill | None) -> Iterator[tuple[int, Any]]:
    if column is None:
        return
    start = 0
    for block in column.blocks():
        yield start, block
        start += int(block.size)


def float_column(column: array[float] | array[int] | Spill) -> FloatArray:
    """A column as a float64 array in memory."""
    import numpy as np

    if isinstance(column, Spill):
        return np.asarray(column.whole(), dtype=np.float64)
    return np.frombuffer(column, dtype=np.float64)


def code_column(column: array[float] | array[int] | Spill) -> CodeArray | None:
    """A column of codes as an array in memory, None if every code is `NONE`."""
    import numpy as np

    if isinstance(column, Spill):
        found = np.asarray(column.whole(), dtype=np.intc)
    else:
        found = np.frombuffer(column, dtype=np.intc)  # array's "i" is C's int
    return found if (found != NONE).any() else None
