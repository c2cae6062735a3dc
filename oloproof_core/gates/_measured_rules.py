"""Rules on a run's latency and cost: `{metric: latency_p95_ms, max: 2000}`,
`{metric: cost_per_success_usd, max: 0.01, cap_usd: 0.05}`.

They decide like every interval rule: pass when the interval's upper end is at or
below the threshold, fail when its lower end is above it, inconclusive otherwise
(the figures and their intervals: `_measured`). Only `max` is offered: a floor on
latency or cost protects nothing. A cost's upper end is finite only under a stated
cap per case (`cap_usd`), so a cost rule without one can never pass and is refused
when the policy is read; a case that cost more than its cap refutes the cap, and
the run is refused with that case named rather than decided on a false premise.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from oloproof_core.gates._errors import PolicyError
from oloproof_core.gates._more_cases import repeats_needed
from oloproof_core.gates._outcome import MoreCases, Outcome, RuleOutcome
from oloproof_core.gates._rules import Rule
from oloproof_core.results.measured import (
    COSTS,
    FIGURES,
    CaseFigures,
    MeasuredFigure,
    NotMeasuredError,
    case_figures,
    measured_figure,
    pass_fail_criteria,
)
from oloproof_core.stats import Interval
from oloproof_core.stats._cap import CapExceededError

if TYPE_CHECKING:
    from oloproof_core.gates._context import DecisionContext

KEYS = {
    "cap_usd": "cost rules: the most one case can cost, in US dollars (costs have no top "
    "of their own, so no interval's upper end is finite without it)",
    "success": "cost_per_success_usd: the pass/fail criterion that says a case succeeded "
    "(default: every pass/fail criterion of the run)",
}


def number(value: float | None) -> str:
    if value is None:
        return "—"
    return "∞" if value == math.inf else f"{value:.4g}"


@dataclass(frozen=True, slots=True)
class MeasuredRule(Rule):
    """`metric` (a latency quantile or a cost figure) must be at most `threshold`."""

    metric: str
    threshold: float
    cap: float | None = None
    success: str | None = None

    kind = "measured"
    reads_interval = True

    @property
    def label(self) -> str:
        return f"{self.metric} ≤ {self.threshold:g}"

    def refused_before_run(self, *, sequential: bool) -> str | None:
        if sequential:
            return (
                f"{self.where}: {self.metric} is decided on a fixed number of cases; a "
                "sequential gate (sequential:, --until-decided) cannot read it"
            )
        return None

    def validate(self, context: DecisionContext) -> None:
        refused = self.refused_before_run(sequential=context.sequential)
        if refused is not None:
            raise PolicyError(refused)
        self._figure(context, context.confidence)

    def _case_figures(self, context: DecisionContext) -> CaseFigures:
        if self.success is not None:
            found = pass_fail_criteria(context.result)
            if self.success not in found:
                raise PolicyError(
                    f"{self.where}.success: {self.success!r} is not a pass/fail criterion "
                    f"of this run; its pass/fail criteria are: {', '.join(found) or 'none'}"
                )
        try:
            return case_figures(context.result, self.success)
        except NotMeasuredError as exc:
            raise PolicyError(f"{self.where}: {self.metric} cannot be read: {exc}") from None

    def _figure(self, context: DecisionContext, confidence: float) -> MeasuredFigure:
        figures = self._case_figures(context)
        return self._figure_of(figures, confidence)

    def _figure_of(self, figures: CaseFigures, confidence: float) -> MeasuredFigure:
        try:
            return measured_figure(figures, self.metric, confidence, cap=self.cap)
        except CapExceededError as exc:
            raise PolicyError(
                f"{self.where}.cap_usd: case {figures.ids[exc.index]!r} cost "
                f"${exc.value:g}, above the stated cap of ${exc.cap:g} a case, so the "
                "cap does not hold and the interval it bounds would be wrong; raise "
                "cap_usd to what a case can really cost"
            ) from None
        except NotMeasuredError as exc:
            raise PolicyError(f"{self.where}: {exc}") from None

    def decide(self, interval: Interval) -> Outcome:
        if interval.upper <= self.threshold:
            return "pass"
        return "fail" if interval.lower > self.threshold else "inconclusive"

    def fails_at(self, context: DecisionContext, confidence: float) -> bool:
        return self.decide(self._figure(context, confidence).interval) == "fail"

    def check(self, context: DecisionContext) -> RuleOutcome:
        figures = self._case_figures(context)
        figure = self._figure_of(figures, context.confidence)
        interval = figure.interval
        outcome = self.decide(interval)
        level = f"{100 * context.confidence:.3g}%"
        ends = f"[{number(interval.lower)}, {number(interval.upper)}]"
        where = f"the {level} interval for {self.metric}, {ends}"
        bound = f"{self.threshold:g}"
        span = f"interval {number(interval.lower)}–{number(interval.upper)}"
        note = f" ({figure.n_missing} missing cases widen it)" if figure.n_missing else ""
        more = None
        if outcome == "pass":
            reason = f"The whole of {where}, is at or below {bound}{note}."
            summary = span
        elif outcome == "fail":
            reason = f"The whole of {where}, is above {bound}{note}."
            summary = f"{span} above {bound}"
        else:
            more = self._more_cases(context, figures, figure)
            reason = f"The {where[4:]}, straddles {bound}{note}; {_more_text(more)}."
            summary = f"{span} straddles {bound}; {_more_text(more, short=True)}"
        data = {
            **figure.to_dict(),
            "lower": interval.lower,
            "upper": interval.upper if interval.upper < math.inf else None,
            "threshold": self.threshold,
            "side": "max",
            "cap_usd": self.cap,
        }
        return self._outcome(outcome, reason, summary, data, metric=self.metric, more_cases=more)

    def _more_cases(
        self, context: DecisionContext, figures: CaseFigures, figure: MeasuredFigure
    ) -> MoreCases:
        if not context.readouts:
            return MoreCases(None, "", "readout skipped at an intermediate look")
        size = len(figures.ids)

        def repeated(k: int) -> Interval:
            return self._figure_of(_repeated(figures, k), context.confidence).interval

        return repeats_needed(
            repeated,
            lambda interval: self.decide(interval) != "inconclusive",
            size,
            estimate_on_threshold=figure.estimate == self.threshold,
            limit=20_000,
        )

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {"metric": self.metric, "max": self.threshold}
        if self.cap is not None:
            data["cap_usd"] = self.cap
        if self.success is not None:
            data["success"] = self.success
        return data


def _more_text(more: MoreCases, *, short: bool = False) -> str:
    if more.count is None:
        return more.note.split(";")[0] if short else more.note
    if short:
        return f"~{more.count:,} more cases needed"
    return f"roughly {more.count:,} more cases like these would decide it"


def _repeated(figures: CaseFigures, k: int) -> CaseFigures:
    """The run's cases `k` times over, each copy a new case (for the projection)."""
    ids = [f"{case_id}\0{copy}" for copy in range(k) for case_id in figures.ids]
    # As lists: a run's columns come as arrays, which `* k` would multiply value by value.
    success = None if figures.success is None else list(figures.success) * k
    return CaseFigures(ids, list(figures.latency) * k, list(figures.cost) * k, success)


def measured_rule(
    entry: Mapping[str, Any], where: Callable[[tuple[Any, ...]], str], path: tuple[Any, ...]
) -> MeasuredRule:
    """The rule of a policy entry naming a latency or cost figure (`FIGURES`)."""
    metric = str(entry.get("metric"))
    misplaced = next((key for key in KEYS if key in entry), None)
    if metric not in FIGURES and misplaced is not None:
        raise PolicyError(
            f"{where((*path, misplaced))}: applies to the latency and cost rules only "
            f"(metric: {', '.join(FIGURES)})"
        )
    if any(key in entry for key in ("min", "missing", "no_regression", "require")) or (
        "max" not in entry
    ):
        raise PolicyError(
            f"{where(path)}: {metric} takes 'max' only (e.g. max: 2000 for milliseconds, "
            "max: 0.01 for dollars): the whole interval must be at or below it"
        )
    threshold = entry["max"]
    if isinstance(threshold, bool) or not isinstance(threshold, (int, float)):
        raise PolicyError(f"{where((*path, 'max'))}: must be a number, got {threshold!r}")
    if not (threshold > 0 and math.isfinite(threshold)):
        raise PolicyError(
            f"{where((*path, 'max'))}: must be above 0 (a figure at or below 0 can "
            f"never be shown), got {threshold!r}"
        )
    return MeasuredRule(
        where(path),
        metric,
        float(threshold),
        cap=_cap(entry, metric, where, path),
        success=_success(entry, metric, where, path),
    )


def _cap(
    entry: Mapping[str, Any],
    metric: str,
    where: Callable[[tuple[Any, ...]], str],
    path: tuple[Any, ...],
) -> float | None:
    cap = entry.get("cap_usd")
    if metric not in COSTS:
        if cap is not None:
            raise PolicyError(f"{where((*path, 'cap_usd'))}: applies to cost rules only")
        return None
    if cap is None:
        raise PolicyError(
            f"{where(path)}: {metric} needs cap_usd, the most one case can cost: costs "
            "have no top of their own, and without one no interval's upper end is finite, "
            "so the rule could never pass (e.g. cap_usd: 0.05)"
        )
    if isinstance(cap, bool) or not isinstance(cap, (int, float)) or not (0 < cap < math.inf):
        raise PolicyError(f"{where((*path, 'cap_usd'))}: must be a number above 0, got {cap!r}")
    return float(cap)


def _success(
    entry: Mapping[str, Any],
    metric: str,
    where: Callable[[tuple[Any, ...]], str],
    path: tuple[Any, ...],
) -> str | None:
    success = entry.get("success")
    if success is None:
        return None
    at = where((*path, "success"))
    if metric != "cost_per_success_usd":
        raise PolicyError(f"{at}: applies to cost_per_success_usd only")
    if not isinstance(success, str) or not success:
        raise PolicyError(f"{at}: must be the name of a pass/fail criterion, e.g. exact_label")
    return success


def is_measured(entry: Mapping[str, Any]) -> bool:
    """Whether a policy entry is a latency or cost rule, or carries one's keys."""
    return entry.get("metric") in FIGURES or any(key in entry for key in KEYS)
