"""A comparison case by case: each case's value per metric on both sides and the change.

`CaseChanges` filters (regressed, improved, changed, missing on either side, output
changed) and orders (by change) the union of the two runs' cases with whole-array
operations, and builds row objects only for the slice asked for, so a page of a
100,000-case comparison costs a few milliseconds.
"""

from __future__ import annotations

from collections.abc import Collection, Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, overload

import numpy as np

from oloproof_core.errors import ConfigError
from oloproof_core.results.compare._paired import FloatArray

if TYPE_CHECKING:
    from oloproof_core.results.compare._figures import ComparisonFigures
    from oloproof_core.results.compare._repeat_cases import RepeatCases
    from oloproof_core.results.compare._repeat_evidence import RepeatCase

CASE_FILTERS = ("all", "changed", "regressed", "improved", "missing", "output_changed")
"""`changed`: a shown metric's value changed; `missing`: a case absent from a run, or
without a value there, on a shown metric; `output_changed`: a case in both runs whose
output or error differs, whatever its values (`CaseChanges`'s `output_changed`)."""
CASE_ORDERS = ("case", "change", "-change")
"""`change`: largest drop first; `-change`: largest gain first; `case`: the runs' order."""


@dataclass(frozen=True, slots=True)
class MetricChange:
    """One metric on one case: both values (None where missing) and candidate − baseline."""

    metric: str
    baseline: float | None
    candidate: float | None
    change: float | None

    def to_dict(self) -> dict[str, float | None]:
        return {"baseline": self.baseline, "candidate": self.candidate, "change": self.change}


@dataclass(frozen=True, slots=True)
class CaseChange:
    """One case of a comparison.

    `status` is over the shown metrics: "regressed" (some went down, none up),
    "improved", "mixed" (some each way), "missing" (no change seen and a value
    missing on a side), or "unchanged".
    """

    case_id: str
    in_baseline: bool
    in_candidate: bool
    status: str
    metrics: tuple[MetricChange, ...]
    repeat_case: RepeatCase | None = None
    """The case this row is a repeat of, with its status against its own noise, when
    either run repeated its cases (`Comparison.repeat_cases`)."""

    def to_dict(self) -> dict[str, Any]:
        found = {
            "case_id": self.case_id,
            "status": self.status,
            "in_baseline": self.in_baseline,
            "in_candidate": self.in_candidate,
            "metrics": {item.metric: item.to_dict() for item in self.metrics},
        }
        if self.repeat_case is not None:
            found["repeat_case"] = self.repeat_case.to_dict()
        return found


def _float(value: float) -> float | None:
    return None if value != value else value  # NaN is the one value unequal to itself


class CaseChanges(Sequence[CaseChange]):
    """The cases of a comparison, filtered by `show` and ordered by `order`.

    `metric` narrows the filter and the order to one metric (every compared
    metric when None); each row still carries every metric's values.
    `output_changed` names the cases whose output or error differs between the
    runs (`outputs_changed`, or the store's own reading); the comparison holds
    values only, so without it the `output_changed` filter is not offered.
    `repeat_status` keeps the rows whose case has that status in
    `comparison.repeat_cases(alpha=alpha, metric=metric)` (every row when "all").
    """

    def __init__(
        self,
        comparison: ComparisonFigures,
        *,
        show: str = "all",
        metric: str | None = None,
        order: str = "case",
        output_changed: Collection[str] | None = None,
        repeat_status: str = "all",
        alpha: float | None = None,
    ) -> None:
        _check_choice("show", show, CASE_FILTERS)
        _check_choice("order", order, CASE_ORDERS)
        self.comparison = comparison
        self.show, self.metric, self.order = show, metric, order
        self.metric_names = tuple(item.metric for item in comparison.metrics)
        self._ids, base, cand = _matrices(comparison)
        self._base, self._cand = base, cand
        self._change = cand - base
        shown = _shown_rows(comparison, metric)
        change = self._change[shown]
        down, up = (change < 0).any(axis=0), (change > 0).any(axis=0)
        missing = (np.isnan(base[shown]) | np.isnan(cand[shown])).any(axis=0)
        self._masks = {
            "all": np.ones(len(self._ids), dtype=bool),
            "changed": down | up,
            "regressed": down,
            "improved": up,
            "missing": missing,
        }
        if output_changed is not None:
            self._masks["output_changed"] = _named(self._ids, output_changed)
        elif show == "output_changed":
            raise ConfigError(
                "show='output_changed' needs the cases whose outputs differ: pass "
                "output_changed=outputs_changed(baseline, candidate)"
            )
        # Small integer codes (see _STATUSES): string arrays of 100,000 cost ten times more.
        self._status = np.where(
            down & up, 3, np.where(down, 1, np.where(up, 2, np.where(missing, 4, 0)))
        ).astype(np.int8)
        self.repeat_status = repeat_status
        self.repeat_cases = _repeat_cases(comparison, repeat_status, alpha, metric)
        positions = np.flatnonzero(self._chosen(show))
        if order != "case":
            positions = _ordered(positions, change, _spans(comparison, shown), order)
        self._positions = positions
        only_baseline, only_candidate = comparison.repeats_only_in
        self._absent_from_baseline = frozenset((*comparison.only_in_candidate, *only_candidate))
        self._absent_from_candidate = frozenset((*comparison.only_in_baseline, *only_baseline))

    def _chosen(self, show: str) -> np.ndarray[Any, Any]:
        """The rows `show` keeps, narrowed to the cases with `repeat_status`."""
        chosen = np.asarray(self._masks[show], dtype=bool)
        if self.repeat_status == "all" or self.repeat_cases is None:
            return chosen
        narrowed = _sized(self.repeat_cases.matches(self.repeat_status), len(self._ids))
        both: np.ndarray[Any, Any] = np.logical_and(chosen, narrowed)
        return both

    def counts(self) -> dict[str, int]:
        """How many cases each filter shows (for the filter's labels)."""
        return {name: int(np.count_nonzero(mask)) for name, mask in self._masks.items()}

    def repeat_counts(self) -> dict[str, int]:
        """How many cases (repeats put together) each repeat filter keeps; {} without."""
        return {} if self.repeat_cases is None else self.repeat_cases.counts()

    def ids(self) -> list[str]:
        return [str(case_id) for case_id in self._ids[self._positions]]

    def __len__(self) -> int:
        return int(self._positions.size)

    @overload
    def __getitem__(self, index: int) -> CaseChange: ...
    @overload
    def __getitem__(self, index: slice) -> list[CaseChange]: ...
    def __getitem__(self, index: int | slice) -> CaseChange | list[CaseChange]:
        if isinstance(index, slice):
            return self._rows(self._positions[index])
        return self._rows(self._positions[index : index + 1 or None])[0]

    def __iter__(self) -> Iterator[CaseChange]:
        for start in range(0, len(self), 1000):
            yield from self._rows(self._positions[start : start + 1000])

    def _rows(self, positions: np.ndarray[Any, Any]) -> list[CaseChange]:
        """Rows for some positions, the values taken out of the arrays at once."""
        base = self._base[:, positions].tolist()
        cand = self._cand[:, positions].tolist()
        change = self._change[:, positions].tolist()
        rows = []
        for column, position in enumerate(positions.tolist()):
            case_id = str(self._ids[position])
            metrics = tuple(
                MetricChange(
                    metric=name,
                    baseline=_float(base[row][column]),
                    candidate=_float(cand[row][column]),
                    change=_float(change[row][column]),
                )
                for row, name in enumerate(self.metric_names)
            )
            rows.append(
                CaseChange(
                    case_id=case_id,
                    in_baseline=case_id not in self._absent_from_baseline,
                    in_candidate=case_id not in self._absent_from_candidate,
                    status=_STATUSES[int(self._status[position])],
                    metrics=metrics,
                    repeat_case=self._repeat_case(case_id),
                )
            )
        return rows

    def _repeat_case(self, case_id: str) -> RepeatCase | None:
        if self.repeat_cases is None or not len(self.repeat_cases):
            return None
        return self.repeat_cases.of(case_id)


_STATUSES = ("unchanged", "regressed", "improved", "mixed", "missing")


def _repeat_cases(
    comparison: ComparisonFigures, status: str, alpha: float | None, metric: str | None
) -> RepeatCases | None:
    """The cases' statuses against their noise: when either run repeated, or when asked."""
    from oloproof_core.results.compare._repeat_cases import RepeatCases, check_repeat_filter

    check_repeat_filter(status)
    if status == "all" and max(comparison.repeats) == 1:
        return None
    return RepeatCases(comparison, alpha=alpha, metric=metric)


def _sized(mask: np.ndarray[Any, Any], size: int) -> np.ndarray[Any, Any]:
    """A repeat filter's mask, all False when the comparison has no metric to judge by."""
    return mask if mask.size == size else np.zeros(size, dtype=bool)


def _check_choice(name: str, value: str, allowed: tuple[str, ...]) -> None:
    if value not in allowed:
        raise ConfigError(f"{name} must be one of {', '.join(allowed)}; got {value!r}")


def _named(ids: np.ndarray[Any, Any], chosen: Collection[str]) -> np.ndarray[Any, Any]:
    """True at the cases whose id is among `chosen`."""
    wanted = chosen if isinstance(chosen, set | frozenset) else frozenset(chosen)
    return np.fromiter((case_id in wanted for case_id in ids.tolist()), bool, count=len(ids))


def _matrices(comparison: ComparisonFigures) -> tuple[np.ndarray[Any, Any], FloatArray, FloatArray]:
    """Case ids of the union and both sides' values, one row per metric."""
    items = comparison.metrics
    if not items:
        union = list(dict.fromkeys([*comparison.only_in_baseline, *comparison.only_in_candidate]))
        empty = np.full((0, len(union)), np.nan)
        return np.asarray(union, dtype=object), empty, empty.copy()
    ids = np.asarray(items[0]._ids, dtype=object)
    base = np.vstack([item._baseline for item in items])
    cand = np.vstack([item._candidate for item in items])
    return ids, base, cand


def _shown_rows(comparison: ComparisonFigures, metric: str | None) -> list[int]:
    names = [item.metric for item in comparison.metrics]
    if metric is None or metric == "":
        return list(range(len(names)))
    if metric not in names:
        known = ", ".join(names) or "none"
        raise ConfigError(f"no metric {metric!r} in both runs; compared metrics: {known}")
    return [names.index(metric)]


def _spans(comparison: ComparisonFigures, rows: list[int]) -> FloatArray:
    spans = [comparison.metrics[row].score_range for row in rows]
    return np.array([[high - low or 1.0] for low, high in spans], dtype=float)


def _ordered(
    positions: np.ndarray[Any, Any], change: FloatArray, spans: FloatArray, order: str
) -> np.ndarray[Any, Any]:
    """Positions by their change (on each metric's range, summed), cases without one last."""
    if positions.size == 0 or change.shape[0] == 0:
        return positions
    scaled = change[:, positions] / spans
    seen = ~np.isnan(scaled).all(axis=0)
    key = np.where(seen, np.nansum(scaled, axis=0), np.inf)
    if order == "-change":
        key = np.where(seen, -key, np.inf)
    # Stable, so equal changes keep the runs' order.
    return positions[np.argsort(key, kind="stable")]
