"""The paired rule: no regression against the baseline beyond a margin."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from oloproof_core.compare import MetricComparison
from oloproof_core.gates import _format as fmt
from oloproof_core.gates._context import DecisionContext
from oloproof_core.gates._errors import PolicyError
from oloproof_core.gates._more_cases import more_cases_needed
from oloproof_core.gates._outcome import MoreCases, Outcome, RuleOutcome
from oloproof_core.gates._rules import Rule, _level, _readout, _short_readout
from oloproof_core.stats import Interval


@dataclass(frozen=True, slots=True)
class NoRegressionRule(Rule):
    """Paired against the baseline: candidate − baseline must be ≥ −`margin`."""

    metric: str
    margin: float

    kind = "no_regression"
    needs_baseline = True

    @property
    def label(self) -> str:
        return f"{self.metric} vs baseline ≥ −{fmt.threshold(self.margin)}"

    def validate(self, context: DecisionContext) -> None:
        low, high = self._known_metric(context, self.metric).score_range
        if self.margin > high - low:
            raise PolicyError(
                f"{self.where}: no_regression: margin {fmt.threshold(self.margin)}"
                f" exceeds the width of {self.metric!r}'s range "
                f"[{fmt.threshold(low)}, {fmt.threshold(high)}]; such a rule "
                "could never fail"
            )
        if context.baseline is not None and not context.baseline.metrics:
            raise PolicyError(f"{self.where}: the baseline run has no metrics")

    def _decide(self, interval: Interval) -> Outcome:
        floor = -self.margin
        return (
            "pass"
            if interval.lower >= floor
            else "fail"
            if interval.upper < floor
            else "inconclusive"
        )

    def check(self, context: DecisionContext) -> RuleOutcome:
        comparison = context.comparison()
        if not comparison.has_metric(self.metric):
            raise PolicyError(
                f"{self.where}: the baseline run ({context.baseline_label}) has "
                f"no metric {self.metric!r}; compare against a run that "
                "measured it"
            )
        paired = comparison.metric(self.metric)
        interval = paired.interval
        outcome = self._decide(interval)
        figures: dict[str, Any] = {
            "baseline_estimate": paired.baseline_estimate,
            "candidate_estimate": paired.candidate_estimate,
            "difference": paired.difference,
            "lower": interval.lower,
            "upper": interval.upper,
            "margin": self.margin,
            "p_value": paired.p_value,
            "n_pairs": paired.n_pairs,
            "n_missing_pairs": paired.n_missing_pairs,
            "regressed": len(paired.regressed),
            "improved": len(paired.improved),
            "method": paired.method,
            "baseline": context.baseline_label,
        }
        what = (
            f"the paired {_level(context)} interval for {self.metric} (candidate − "
            f"baseline), [{fmt.signed(interval.lower)}, {fmt.signed(interval.upper)}]"
        )
        counts = f"{len(paired.regressed)} regressed, {len(paired.improved)} improved"
        reason, summary, more = self._explain(outcome, paired, what, counts)
        return self._outcome(outcome, reason, summary, figures, metric=self.metric, more_cases=more)

    def _explain(
        self, outcome: Outcome, paired: MetricComparison, what: str, counts: str
    ) -> tuple[str, str, MoreCases | None]:
        """The rule's reason and one-line summary, and for a straddle the cases readout."""
        interval = paired.interval
        floor = f"−{fmt.threshold(self.margin)}"
        more: MoreCases | None = None
        if outcome == "pass":
            reason = f"The whole of {what}, is at or above {floor} ({counts})."
            summary = (
                f"difference {fmt.signed(paired.difference)}, interval "
                f"{fmt.signed(interval.lower)}–{fmt.signed(interval.upper)}"
            )
        elif outcome == "fail":
            reason = f"The whole of {what}, is below {floor}: a regression ({counts})."
            summary = (
                f"difference {fmt.signed(paired.difference)}, interval "
                f"{fmt.signed(interval.lower)}–{fmt.signed(interval.upper)} below {floor}"
            )
        else:
            more = more_cases_needed(
                paired.interval_with_more_cases,
                lambda projected: self._decide(projected) != "inconclusive",
                estimate_on_threshold=paired.difference == -self.margin,
                limit=200_000,
            )
            reason = f"The {what[4:]}, straddles {floor} ({counts}); {_readout(more)}."
            summary = (
                f"difference {fmt.signed(paired.difference)}, interval "
                f"{fmt.signed(interval.lower)}–{fmt.signed(interval.upper)} straddles "
                f"{floor}; {_short_readout(more)}"
            )
        return reason, summary, more

    def to_dict(self) -> dict[str, Any]:
        return {"metric": self.metric, "no_regression": {"margin": self.margin}}
