"""A run's latency and cost as figures with intervals: p50 and p95 latency, the mean cost
per case and the cost per successful case.

Each case's figures are the platform's own measurements (`CaseResult.measurements`):
the wall time of the system call and the summed cost of the system's model calls.
What each figure counts, and why:

- **latency**: a case whose system failed has no reply, so no reply time; it is
  missing, and the quantile's interval ranks it at 0 for its lower end and at
  infinity for its upper end (`oloproof_core.stats._quantile`). A timeout thus
  counts against a latency rule as the slowest possible reply, never for it.
- **cost**: a failed case's calls were paid for, so its cost counts; a cost is
  missing only where a call could not be priced. Costs have no natural top, so
  the mean's upper end is finite only under a stated cap per case
  (`oloproof_core.stats._nonnegative_mean`).
- **success**: a case succeeds when every pass/fail criterion of the run passes
  (or the one criterion a rule names); a missing verdict leaves it unknown, and
  a failing one decides it.

A run concluded from its columns (on the workers) reads the same measurements from
the columns its store kept of each case (`CaseColumns.measured_columns`), in the same
reading order, so both give the same figures for the same cases.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, Protocol

from oloproof_core.results.columns.case_columns import CaseColumns
from oloproof_core.stats import Interval, proportion_interval
from oloproof_core.stats._cost_per_success import ratio_interval, split_level
from oloproof_core.stats._quantile import quantile_estimate, quantile_interval

if TYPE_CHECKING:
    from oloproof_core.cases.case import CaseResult
    from oloproof_core.results.columns.case_columns import FloatArray
    from oloproof_core.results.estimate import MetricEstimate
    from oloproof_core.stats import ReadOrder
    from oloproof_core.stats._order import Keys


class MeasuredRun(Protocol):
    """What the latency and cost figures read of a run (a `Result` has it, and shows
    them), so neither the figures nor their text import the result."""

    metrics: list[MetricEstimate]
    provenance: dict[str, Any]

    @property
    def cases(self) -> Sequence[CaseResult]: ...


QUANTILES = {"latency_p50_ms": 0.5, "latency_p95_ms": 0.95}
COSTS = ("cost_per_case_usd", "cost_per_success_usd")
FIGURES = (*QUANTILES, *COSTS)
QUANTILE_METHOD = "order statistics, exact and distribution-free (binomial ranks)"
BOUNDED_COST = "betting on costs capped at ${cap:g} a case (Waudby-Smith & Ramdas 2024)"
UNBOUNDED_COST = "betting lower bound for values >= 0; no upper end without a cap per case"
RATIO_METHOD = "Bonferroni: mean cost and Clopper–Pearson success rate, each at {level:g} %"


class NotMeasuredError(ValueError):
    """The run does not carry what a figure needs; the message says what is missing."""


@dataclass(frozen=True, slots=True)
class CaseFigures:
    """Per case: latency (ms), cost (US dollars) and success (1, 0), NaN where unknown.

    Plain lists from cases, so the latency figures need no NumPy, which only the cost
    figures load; arrays from a run's columns, which hold 8 bytes a case."""

    ids: Sequence[str]
    latency: Sequence[float] | FloatArray
    cost: Sequence[float] | FloatArray
    success: Sequence[float] | FloatArray | None
    """None when the run has no pass/fail criterion to say which cases succeeded."""
    order: ReadOrder | None = None
    """The reading order of `ids` where the columns know it, so the ids need not be read."""

    @property
    def keys(self) -> Keys:
        """What fixes the cost figures' reading order, as for every betting interval."""
        return self.ids if self.order is None else self.order


@dataclass(frozen=True, slots=True)
class MeasuredFigure:
    name: str
    estimate: float | None
    interval: Interval
    n_observed: int
    n_missing: int
    method: str
    confidence: float

    def to_dict(self) -> dict[str, Any]:
        upper = self.interval.upper
        return {
            "metric": self.name,
            "estimate": self.estimate,
            # JSON has no infinity: an end that nothing bounds is null, with `unbounded`.
            "interval": {
                "lower": self.interval.lower,
                "upper": upper if upper < math.inf else None,
            },
            "unbounded": upper == math.inf,
            "n_observed": self.n_observed,
            "n_missing": self.n_missing,
            "method": self.method,
            "confidence": self.confidence,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> MeasuredFigure:
        """The figure `to_dict` wrote."""
        interval = data["interval"]
        upper = math.inf if data.get("unbounded") else interval["upper"]
        return cls(
            name=data["metric"],
            estimate=data["estimate"],
            interval=Interval(interval["lower"], upper),
            n_observed=data["n_observed"],
            n_missing=data["n_missing"],
            method=data["method"],
            confidence=data["confidence"],
        )


def case_figures(
    result: MeasuredRun, success: str | None = None, *, with_success: bool = True
) -> CaseFigures:
    """The run's per-case latency, cost and success (none without `with_success`, which
    reads every case's verdicts); NotMeasuredError if it has none."""
    cases = result.cases
    if not cases or (isinstance(cases, CaseColumns) and not cases.keeps_measurements()):
        raise NotMeasuredError(
            "this result carries no case measurements (it was saved without its cases, or "
            "read from value columns that keep none), so it has no latencies or costs to read"
        )
    if not with_success:
        criteria = []
    else:
        criteria = [success] if success is not None else pass_fail_criteria(result)
    if isinstance(cases, CaseColumns):
        return _column_figures(cases, _success(result, criteria) if criteria else None)
    timed = [case.latency_ms for case in cases]
    if timed.count(None) == len(timed):
        raise NotMeasuredError(f"none of the run's {len(cases)} cases has a measured latency")
    latency = [
        math.nan if ms is None or case.error is not None else ms
        for case, ms in zip(cases, timed, strict=True)
    ]
    cost = [math.nan if usd is None else usd for usd in (case.cost_usd for case in cases)]
    return CaseFigures(
        ids=[case.id for case in cases],
        latency=latency,
        cost=cost,
        success=_success(result, criteria) if criteria else None,
    )


def _column_figures(
    cases: CaseColumns, success: Sequence[float] | FloatArray | None
) -> CaseFigures:
    """`case_figures` from a run's columns: the same figures, one array per column."""
    import numpy as np

    measured = cases.measured_columns()
    if measured is None:
        raise NotMeasuredError(f"none of the run's {len(cases)} cases has a measured latency")
    keys = cases.order_keys()
    return CaseFigures(
        ids=cases.ids,
        latency=np.where(measured.failed, np.nan, measured.latency).astype(np.float64),
        cost=measured.cost,
        success=success,
        order=None if isinstance(keys, Sequence) else keys,
    )


def pass_fail_criteria(result: MeasuredRun) -> list[str]:
    return [m.metric for m in result.metrics if m.value_type == "pass_fail" and not m.is_sub_score]


def with_success(result: MeasuredRun, figures: CaseFigures) -> CaseFigures:
    """`figures` read without success (`case_figures(..., with_success=False)`), with it."""
    criteria = pass_fail_criteria(result)
    return replace(figures, success=_success(result, criteria) if criteria else None)


def _success(result: MeasuredRun, criteria: list[str]) -> Sequence[float] | FloatArray:
    """1 where every criterion passed, 0 where one failed, NaN where it is not known."""
    if isinstance(result.cases, CaseColumns):
        return _column_success(result.cases, criteria)
    success = []
    for case in result.cases:
        values = [
            None if verdict is None else verdict.value
            for verdict in (case.verdicts.get(criterion) for criterion in criteria)
        ]
        if any(value is not None and value < 1.0 for value in values):
            success.append(0.0)
        else:
            success.append(math.nan if None in values else 1.0)
    return success


def _column_success(cases: CaseColumns, criteria: list[str]) -> FloatArray:
    import numpy as np

    failed = np.zeros(len(cases), dtype=bool)
    unknown = np.zeros(len(cases), dtype=bool)
    for criterion in criteria:
        values = cases.metric_values(criterion)
        failed |= values < 1.0  # NaN compares false: a missing verdict decides nothing
        unknown |= np.isnan(values)
    return np.where(failed, 0.0, np.where(unknown, np.nan, 1.0)).astype(np.float64)


def measured_figure(
    figures: CaseFigures, name: str, confidence: float, *, cap: float | None = None
) -> MeasuredFigure:
    """One figure; `cap` is the stated most a case can cost (cost figures only)."""
    if name in QUANTILES:
        return _quantile(figures, name, confidence)
    if name == "cost_per_case_usd":
        return _mean_cost(figures, confidence, cap)
    return _cost_per_success(figures, confidence, cap)


def _split(column: Sequence[float] | FloatArray) -> tuple[Sequence[float] | FloatArray, int]:
    """The observed values (a column's stay an array) and how many are missing."""
    if isinstance(column, list):
        observed: Sequence[float] | FloatArray = [v for v in column if not math.isnan(v)]
    else:
        import numpy as np

        array = np.asarray(column, dtype=np.float64)
        observed = array[~np.isnan(array)]
    return observed, len(column) - len(observed)


def _quantile(figures: CaseFigures, name: str, confidence: float) -> MeasuredFigure:
    q = QUANTILES[name]
    observed, missing = _split(figures.latency)
    interval = quantile_interval(observed, missing, q, confidence)
    estimate = quantile_estimate(observed, q)
    return MeasuredFigure(
        name, estimate, interval, len(observed), missing, QUANTILE_METHOD, confidence
    )


def _cost_method(cap: float | None) -> str:
    return UNBOUNDED_COST if cap is None else BOUNDED_COST.format(cap=cap)


def _mean_cost(figures: CaseFigures, confidence: float, cap: float | None) -> MeasuredFigure:
    import numpy as np  # the cost figures' betting runs on arrays

    from oloproof_core.stats._nonnegative_mean import nonnegative_mean_interval

    observed, missing = _split(figures.cost)
    cost = np.array(figures.cost, dtype=np.float64)
    interval = nonnegative_mean_interval(cost, confidence, cap=cap, keys=figures.keys)
    estimate = math.fsum(observed) / len(observed) if len(observed) else None
    method = _cost_method(cap)
    return MeasuredFigure(
        "cost_per_case_usd", estimate, interval, len(observed), missing, method, confidence
    )


def _cost_per_success(figures: CaseFigures, confidence: float, cap: float | None) -> MeasuredFigure:
    if figures.success is None:
        raise NotMeasuredError(
            "cost_per_success_usd needs a pass/fail criterion to say which cases "
            "succeeded, and this run has none"
        )
    import numpy as np  # the cost figures' betting runs on arrays

    from oloproof_core.stats._nonnegative_mean import nonnegative_mean_interval

    level = split_level(confidence)
    costs = np.array(figures.cost, dtype=np.float64)
    cost = nonnegative_mean_interval(costs, level, cap=cap, keys=figures.keys)
    succeeded, unknown = _split(figures.success)
    wins = int(sum(succeeded))
    rate = proportion_interval(wins, len(succeeded), unknown, level)
    wins_each = np.array(figures.success, dtype=np.float64)
    known = ~(np.isnan(costs) | np.isnan(wins_each))
    # Summed exactly (fsum), so the figure is the same whatever held the column.
    spent_total = math.fsum(costs[known].tolist())
    won_total = math.fsum(wins_each[known].tolist())
    estimate = spent_total / won_total if won_total else None
    method = f"{_cost_method(cap)}; {RATIO_METHOD.format(level=100 * level)}"
    paired = int(known.sum())
    return MeasuredFigure(
        "cost_per_success_usd",
        estimate,
        ratio_interval(cost, rate),
        paired,
        len(figures.cost) - paired,
        method,
        confidence,
    )
