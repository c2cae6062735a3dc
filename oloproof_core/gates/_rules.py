"""The rules a release policy is made of; each decides pass, fail or inconclusive.

Interval rules (a minimum, a maximum, no regression against a baseline) pass when
the whole interval clears the threshold, fail when the whole interval misses it,
and are inconclusive when it straddles it. The missing-case cap and the list of
required metrics are counts, known exactly, so they only pass or fail.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from oloproof_core.gates import _format as fmt
from oloproof_core.gates._errors import PolicyError
from oloproof_core.gates._labelled_readouts import interval_source, labelled_which, more_labels
from oloproof_core.gates._more_cases import repeats_needed
from oloproof_core.gates._outcome import MoreCases, Outcome, RuleOutcome
from oloproof_core.gates._projection import power_cases, repeated_interval
from oloproof_core.gates._readouts import readout, short_readout
from oloproof_core.results.estimate import MetricEstimate
from oloproof_core.stats import MAX_CASES, Interval, cases_needed

if TYPE_CHECKING:
    from oloproof_core.gates._context import DecisionContext


@dataclass(frozen=True, slots=True)
class Rule(ABC):
    where: str
    """`file:line: rules[i]`, prefixed to every error about this rule."""

    kind = "rule"
    needs_baseline = False
    reads_interval = False
    """Interval rules can err; they take part in the gate's multiplicity control."""

    @property
    @abstractmethod
    def label(self) -> str:
        """Short text naming the rule, e.g. `exact_label ≥ 0.9`."""

    @abstractmethod
    def validate(self, context: DecisionContext) -> None:
        """Raise PolicyError if the rule cannot apply to this run (unknown metric, range)."""

    @abstractmethod
    def check(self, context: DecisionContext) -> RuleOutcome:
        """Decide the rule for this run."""

    @abstractmethod
    def to_dict(self) -> dict[str, Any]:
        """The rule as the policy states it, for provenance."""

    def fails_at(self, context: DecisionContext, confidence: float) -> bool:
        """Whether the rule fails with its interval at `confidence` (for Holm's procedure)."""
        return False

    def never_passes(self, low: float, high: float) -> str | None:
        """Why the rule could never pass on a metric with range [low, high], or None."""
        return None

    def refused_before_run(self, *, sequential: bool) -> str | None:
        """Why the rule cannot decide a run that is sequential, or None."""
        return None

    def _outcome(
        self,
        outcome: Outcome,
        reason: str,
        summary: str,
        figures: dict[str, Any],
        *,
        metric: str | None = None,
        more_cases: MoreCases | None = None,
    ) -> RuleOutcome:
        return RuleOutcome(
            rule=self.label,
            kind=self.kind,
            outcome=outcome,
            reason=reason,
            summary=summary,
            metric=metric,
            figures=figures,
            more_cases=more_cases,
        )

    def _known_metric(self, context: DecisionContext, name: str) -> MetricEstimate:
        if not context.has_metric(name):
            known = ", ".join(context.metric_names()) or "none"
            raise PolicyError(
                f"{self.where}: unknown metric {name!r}; this run's metrics are: "
                f"{known} (a sub-score is named criterion.name)"
            )
        return context.result.metric(name)


CASES_NEEDED_METHOD = (
    "exact (Clopper–Pearson) interval at the observed pass rate: the smallest total number "
    "of cases whose interval excludes the threshold (oloproof_core.stats.cases_needed)"
)


def _level(context: DecisionContext) -> str:
    return fmt.percent(context.confidence)


def _missing_note(metric: MetricEstimate) -> str:
    if not metric.n_missing:
        return ""
    return f" ({metric.n_missing} missing cases widen it)"


@dataclass(frozen=True, slots=True)
class BoundRule(Rule):
    """`metric` must be at least (`side="min"`) or at most (`side="max"`) `threshold`."""

    metric: str
    threshold: float
    side: Literal["min", "max"]

    kind = "bound"
    reads_interval = True

    @property
    def label(self) -> str:
        return f"{self.metric} {'≥' if self.side == 'min' else '≤'} {fmt.threshold(self.threshold)}"

    def never_passes(self, low: float, high: float) -> str | None:
        if not low <= self.threshold <= high:
            return (
                f"{self.where}.{self.side}: {fmt.threshold(self.threshold)} is "
                f"outside the range of {self.metric!r}, [{fmt.threshold(low)}, "
                f"{fmt.threshold(high)}]; give a threshold within it"
            )
        edge = high if self.side == "min" else low
        if self.threshold == edge:
            end = "lower" if self.side == "min" else "upper"
            return (
                f"{self.where}.{self.side}: {fmt.threshold(self.threshold)} can never "
                f"pass: it is the {'top' if self.side == 'min' else 'bottom'} of "
                f"{self.metric!r}'s range, and no finite number of cases puts an "
                f"interval's {end} end there; give a threshold inside the range"
            )
        return None

    def validate(self, context: DecisionContext) -> None:
        low, high = self._known_metric(context, self.metric).score_range
        problem = self.never_passes(low, high)
        if problem is not None:
            raise PolicyError(problem)

    def fails_at(self, context: DecisionContext, confidence: float) -> bool:
        return self._decide(context.interval_for(self.metric, confidence)) == "fail"

    def _decide(self, interval: Interval) -> Outcome:
        lower, upper, threshold = interval.lower, interval.upper, self.threshold
        if self.side == "min":
            return "pass" if lower >= threshold else "fail" if upper < threshold else "inconclusive"
        return "pass" if upper <= threshold else "fail" if lower > threshold else "inconclusive"

    def check(self, context: DecisionContext) -> RuleOutcome:
        metric = context.estimate(self.metric)
        interval = context.interval_for(self.metric)
        outcome = self._decide(interval)
        labelled = context.labelled(self.metric)
        which = labelled_which(labelled)
        where = (
            f"the {_level(context)} interval{which} for {self.metric}, "
            f"[{fmt.number(interval.lower)}, {fmt.number(interval.upper)}]"
        )
        bound = fmt.threshold(self.threshold)
        figures: dict[str, Any] = {
            "estimate": metric.estimate if labelled is None else labelled.estimate,
            "lower": interval.lower,
            "upper": interval.upper,
            "threshold": self.threshold,
            "side": self.side,
            "n_observed": metric.n_observed,
            "n_missing": metric.n_missing,
            "method": _rule_method(context, metric),
            "interval_source": interval_source(context, self.metric),
        }
        more: MoreCases | None = None
        if outcome == "pass":
            side = "at or above" if self.side == "min" else "at or below"
            reason = f"The whole of {where}, is {side} {bound}{_missing_note(metric)}."
            summary = f"interval {fmt.span(interval.lower, interval.upper)}"
        elif outcome == "fail":
            side = "below" if self.side == "min" else "above"
            reason = f"The whole of {where}, is {side} {bound}{_missing_note(metric)}."
            summary = f"interval {fmt.span(interval.lower, interval.upper)} {side} {bound}"
        else:
            more = context.with_plan(self, self._more_cases(context, metric))
            reason = (
                f"The {where[4:]}, straddles {bound}{_missing_note(metric)}, so "
                f"{metric.n_observed + metric.n_missing} cases cannot decide it; "
                f"{readout(more)}."
            )
            summary = (
                f"interval {fmt.span(interval.lower, interval.upper)} straddles "
                f"{bound}; {short_readout(more)}"
            )
        return self._outcome(outcome, reason, summary, figures, metric=self.metric, more_cases=more)

    def _more_cases(self, context: DecisionContext, metric: MetricEstimate) -> MoreCases:
        if not context.readouts:
            return MoreCases(None, "", "readout skipped at an intermediate look")
        labelled = context.labelled(self.metric)
        if labelled is not None:
            return more_labels(labelled, self.threshold)
        if metric.estimate is None:
            return MoreCases(None, "", "nothing was observed, so there is no rate to project")
        values = context.values(self.metric) if context.result.cases else []
        more = self._projection(context, metric, values)
        cases, effect = power_cases(
            metric, values, self.threshold, self.side, context.effect, context.confidence
        )
        return more.with_power(cases, effect)

    def _projection(
        self, context: DecisionContext, metric: MetricEstimate, values: list[float | None]
    ) -> MoreCases:
        simple = metric.value_type == "pass_fail" and not metric.n_missing
        if simple and metric.n_clusters is None:
            count = cases_needed(
                metric.estimate or 0.0, self.threshold, metric.n_observed, context.confidence
            )
            if count is None and metric.estimate != self.threshold:
                return MoreCases(None, CASES_NEEDED_METHOD, f"more than {MAX_CASES:,} cases")
            if count is not None:
                return MoreCases(max(1, count), CASES_NEEDED_METHOD)
        if not context.result.cases:
            return MoreCases(None, "", "the result carries no cases to project from")
        ids = context.ids()
        clusters = None
        if metric.n_clusters is not None:
            clusters = context.clusters()
        return repeats_needed(
            lambda k: repeated_interval(metric, values, ids, clusters, k, context.confidence),
            lambda interval: self._decide(interval) != "inconclusive",
            len(values),
            estimate_on_threshold=metric.estimate == self.threshold,
        )

    def to_dict(self) -> dict[str, Any]:
        return {"metric": self.metric, self.side: self.threshold}


def _rule_method(context: DecisionContext, metric: MetricEstimate) -> str:
    labelled = context.labelled(metric.metric)
    if labelled is not None:
        return labelled.method
    if context.sequential:
        return (
            f"anytime-valid betting confidence sequence over {context.horizon} planned "
            "cases (sequential gate)"
        )
    return metric.method


@dataclass(frozen=True, slots=True)
class MissingRule(Rule):
    """At most `max_count` (and/or a `max_rate` share of) cases may be missing.

    With a metric: cases whose verdict for that metric is missing. Without one:
    cases with anything missing (the system failed, or any verdict is missing).
    """

    metric: str | None
    max_count: int | None
    max_rate: float | None

    kind = "missing"

    @property
    def label(self) -> str:
        caps = []
        if self.max_count is not None:
            caps.append(str(self.max_count))
        if self.max_rate is not None:
            caps.append(fmt.percent(self.max_rate))
        prefix = f"{self.metric} " if self.metric else ""
        return f"{prefix}missing ≤ {' and ≤ '.join(caps)}"

    def validate(self, context: DecisionContext) -> None:
        if self.metric is not None:
            self._known_metric(context, self.metric)

    def _counts(self, context: DecisionContext) -> tuple[int, int]:
        if self.metric is not None:
            metric = context.result.metric(self.metric)
            return metric.n_missing, metric.n_observed + metric.n_missing
        result = context.result
        if result.cases:
            return context.cases_missing(), len(result.cases)
        # A result saved without cases: the most-missing metric is a lower bound on the
        # cases with anything missing, and the best figure available.
        worst = max(result.metrics, key=lambda metric: metric.n_missing)
        return worst.n_missing, worst.n_observed + worst.n_missing

    def check(self, context: DecisionContext) -> RuleOutcome:
        missing, total = self._counts(context)
        rate = missing / total if total else 0.0
        over = []
        if self.max_count is not None and missing > self.max_count:
            over.append(f"the cap of {self.max_count}")
        if self.max_rate is not None and rate > self.max_rate:
            over.append(f"the cap of {fmt.percent(self.max_rate)}")
        outcome: Outcome = "fail" if over else "pass"
        what = (
            f"verdicts for {self.metric}"
            if self.metric
            else "cases (system failures or missing verdicts)"
        )
        relation = "above " + " and ".join(over) if over else "within the cap"
        reason = f"{missing} of {total} {what} are missing ({fmt.percent(rate)}), {relation}."
        return self._outcome(
            outcome,
            reason,
            f"{missing} of {total} missing",
            {
                "n_missing": missing,
                "n_cases": total,
                "rate": rate,
                "max_count": self.max_count,
                "max_rate": self.max_rate,
            },
            metric=self.metric,
        )

    def to_dict(self) -> dict[str, Any]:
        caps = {
            key: value
            for key, value in (("max_count", self.max_count), ("max_rate", self.max_rate))
            if value is not None
        }
        data: dict[str, Any] = {"missing": caps}
        if self.metric is not None:
            data["metric"] = self.metric
        return data


@dataclass(frozen=True, slots=True)
class RequireRule(Rule):
    """Each listed metric must be present in the run with at least one observed value."""

    metrics: tuple[str, ...]

    kind = "require"

    @property
    def label(self) -> str:
        return "require " + ", ".join(self.metrics)

    def validate(self, context: DecisionContext) -> None:
        # An absent metric is what this rule exists to catch: it fails, it does not raise.
        return

    def check(self, context: DecisionContext) -> RuleOutcome:
        absent = [name for name in self.metrics if not context.has_metric(name)]
        empty = [
            name
            for name in self.metrics
            if name not in absent and context.result.metric(name).n_observed == 0
        ]
        problems = []
        if absent:
            problems.append(f"absent from the run: {', '.join(absent)}")
        if empty:
            problems.append(f"nothing observed for: {', '.join(empty)}")
        outcome: Outcome = "fail" if problems else "pass"
        reason = (
            "Required metrics are " + "; ".join(problems) + "."
            if problems
            else f"All {len(self.metrics)} required metrics are present and observed."
        )
        return self._outcome(
            outcome, reason, "; ".join(problems), {"absent": absent, "unobserved": empty}
        )

    def to_dict(self) -> dict[str, Any]:
        return {"require": list(self.metrics)}
